"""OpenTelemetry for a job: where to send (the standard ``OTEL_*`` variables, found where
:mod:`store.monitor.export_settings` says) and what (OTLP/HTTP request bodies in JSON), with the
standard library only.

Off unless ``BATON_TELEMETRY=1`` (and ``OTEL_SDK_DISABLED`` is not ``true``). Endpoints follow the
OTLP exporter specification: ``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`` / ``..._LOGS_ENDPOINT`` as
given, else ``OTEL_EXPORTER_OTLP_ENDPOINT`` plus ``/v1/metrics`` or ``/v1/logs``, else
``http://localhost:4318``. Headers, timeout and the resource come from ``OTEL_EXPORTER_OTLP_HEADERS``
(and the per-signal forms), ``OTEL_EXPORTER_OTLP_TIMEOUT`` and ``OTEL_RESOURCE_ATTRIBUTES`` /
``OTEL_SERVICE_NAME``. Integers go as JSON numbers (``"asInt": 5``): proto3 JSON accepts them, and
some collectors drop the string form.
"""

from __future__ import annotations

from store.base.values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

    Scalar = Union[str, bool, int, float]

DEFAULT_ENDPOINT = "http://localhost:4318"
DEFAULT_TIMEOUT_MS = 5000
SEVERITY = {"INFO": 9, "WARN": 13, "ERROR": 17}
CUMULATIVE = 2
TRUE = ("1", "true", "yes", "on")


def enabled(env: Mapping[str, str]) -> bool:
    return env.get("BATON_TELEMETRY", "").strip().lower() in TRUE and not switched_off(env)


def switched_off(settings: Mapping[str, str]) -> bool:
    """``OTEL_SDK_DISABLED=true`` among ``settings``."""
    return settings.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"


def _pairs(text: str) -> Dict[str, str]:
    """``key1=value1,key2=value2`` (values percent-decoded), as the OTel variables are written."""
    from urllib.parse import unquote

    out = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            out[unquote(key.strip())] = unquote(value.strip())
    return out


class Config(Value):
    __slots__ = ("metrics_url", "logs_url", "metrics_headers", "logs_headers", "timeout", "resource")

    def __init__(self, env: Mapping[str, str]) -> None:
        base = (env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or DEFAULT_ENDPOINT).strip().rstrip("/")
        self.metrics_url = (env.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") or "").strip() or base + "/v1/metrics"
        self.logs_url = (env.get("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT") or "").strip() or base + "/v1/logs"
        shared = _pairs(env.get("OTEL_EXPORTER_OTLP_HEADERS", ""))
        self.metrics_headers = {**shared, **_pairs(env.get("OTEL_EXPORTER_OTLP_METRICS_HEADERS", ""))}
        self.logs_headers = {**shared, **_pairs(env.get("OTEL_EXPORTER_OTLP_LOGS_HEADERS", ""))}
        self.timeout = _seconds(env.get("OTEL_EXPORTER_OTLP_TIMEOUT", ""))
        resource: Dict[str, Scalar] = dict(_pairs(env.get("OTEL_RESOURCE_ATTRIBUTES", "")))
        resource["service.name"] = (env.get("OTEL_SERVICE_NAME") or "").strip() or str(
            resource.get("service.name") or "baton")
        from store import __version__

        resource.setdefault("service.version", __version__)
        self.resource = resource


def _seconds(millis: str) -> float:
    try:
        value = float(millis)
    except ValueError:
        value = DEFAULT_TIMEOUT_MS
    return max(value, 1.0) / 1000.0


# ---- OTLP JSON encoding (the proto3 JSON mapping: lowerCamelCase names, enums as numbers)


def any_value(value: Scalar) -> Dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def attributes(values: Mapping[str, Optional[Scalar]]) -> List[Dict[str, Any]]:
    return [{"key": k, "value": any_value(v)} for k, v in values.items() if v is not None and v != ""]


def nanos(seconds: float) -> str:
    return str(int(seconds * 1_000_000_000))


class Point(Value):
    """One data point: its attributes and value (an int is sent as ``asInt``, a float ``asDouble``)."""

    __slots__ = ("attrs", "value")

    def __init__(self, attrs: Mapping[str, Optional[Scalar]], value: Union[int, float]) -> None:
        self.attrs, self.value = attrs, value


def _point(point: Point, start: str, now: str) -> Dict[str, Any]:
    out: Dict[str, Any] = {"attributes": attributes(point.attrs), "startTimeUnixNano": start, "timeUnixNano": now}
    if isinstance(point.value, int) and not isinstance(point.value, bool):
        out["asInt"] = point.value
    else:
        out["asDouble"] = float(point.value)
    return out


def metric(name: str, unit: str, description: str, points: Sequence[Point], start: float, now: float,
           kind: str = "sum", monotonic: bool = True) -> Dict[str, Any]:
    """A cumulative sum (``kind="sum"``) or a gauge with ``points``."""
    begin, end = nanos(start), nanos(now)
    data = [_point(p, begin, end) for p in points]
    if kind == "gauge":
        for item in data:
            del item["startTimeUnixNano"]
        return {"name": name, "unit": unit, "description": description, "gauge": {"dataPoints": data}}
    return {"name": name, "unit": unit, "description": description,
            "sum": {"dataPoints": data, "aggregationTemporality": CUMULATIVE, "isMonotonic": monotonic}}


def _scope() -> Dict[str, str]:
    from store import __version__

    return {"name": "baton", "version": __version__}


def metrics_body(metrics: Sequence[Dict[str, Any]], resource: Mapping[str, Scalar]) -> Dict[str, Any]:
    return {"resourceMetrics": [{"resource": {"attributes": attributes(resource)},
                                 "scopeMetrics": [{"scope": _scope(), "metrics": list(metrics)}]}]}


def log_record(event: str, body: str, when: float, now: float, attrs: Mapping[str, Optional[Scalar]],
               severity: str = "INFO") -> Dict[str, Any]:
    """One event as a log record: its name (``eventName`` and the ``event.name`` attribute), a
    one-line body, and the job's attributes."""
    return {"timeUnixNano": nanos(when), "observedTimeUnixNano": nanos(now), "severityNumber": SEVERITY[severity],
            "severityText": severity, "body": {"stringValue": body}, "eventName": event,
            "attributes": attributes({"event.name": event, **attrs})}


def logs_body(records: Sequence[Dict[str, Any]], resource: Mapping[str, Scalar]) -> Dict[str, Any]:
    return {"resourceLogs": [{"resource": {"attributes": attributes(resource)},
                              "scopeLogs": [{"scope": _scope(), "logRecords": list(records)}]}]}
