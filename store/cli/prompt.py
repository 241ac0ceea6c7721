"""baton's slash commands typed by a person, answered without a model call.

The UserPromptSubmit hook hands the raw prompt here. Prompts that start with exactly
``/baton:<name>`` are ours, and the bare ``/brief`` and ``/record`` when baton's command files are
installed (the hook checks that). Arguments are parsed in Python, never by a shell: the first words
may be quoted, and a note is the rest of the line as typed, without the quotes that wrap the whole of
it (as ``baton record`` gets it from a shell: one reading for both). Every answer starts with
"baton": Claude Code shows it after its own "Operation stopped by hook: ".
"""

from __future__ import annotations

from store.base.errors import BatonError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Mapping, Optional, Tuple

    from store.state.location import Layout

NAMES = ("brief", "status", "record", "approve", "plan")
BARE_NAMES = ("brief", "record")  # typed without the plugin's prefix: the names on the card
PERSON = "{command} typed in the prompt"


def _command(prompt: str, prefix: str, names: Tuple[str, ...]) -> Optional[Tuple[str, str]]:
    r"""``<prefix><name>``, alone or followed by white space and an argument string (what the regex
    ``<prefix>([a-z]+)(?:\s+(.*))?\Z`` says, read without loading ``re`` into the hook)."""
    text = prompt.strip()
    if not text.startswith(prefix):
        return None
    at = end = len(prefix)
    while end < len(text) and "a" <= text[end] <= "z":
        end += 1
    name, rest = text[at:end], text[end:]
    if name not in names or rest and not rest[0].isspace():
        return None
    return name, rest.strip()


def parse(prompt: str) -> Optional[Tuple[str, str]]:
    """(name, raw argument string) when ``prompt`` is one of baton's commands."""
    return _command(prompt, "/baton:", NAMES)


def parse_bare(prompt: str) -> Optional[Tuple[str, str]]:
    """(name, raw argument string) for a bare ``/brief`` or ``/record``, the card's names."""
    return _command(prompt, "/", BARE_NAMES)


def split_words(raw: str, count: int) -> Tuple[List[str], str]:
    """The first ``count`` words and the untouched rest of ``raw``. A word may be wrapped in
    single or double quotes (to hold spaces); nothing else is interpreted."""
    words: List[str] = []
    pos = 0
    while len(words) < count:
        while pos < len(raw) and raw[pos].isspace():
            pos += 1
        if pos >= len(raw):
            break
        if raw[pos] in "'\"":
            end = raw.find(raw[pos], pos + 1)
            if end < 0:
                raise BatonError(f"cannot read the arguments: no closing {raw[pos]} quote")
            words.append(raw[pos + 1:end])
            pos = end + 1
        else:
            end = pos
            while end < len(raw) and not raw[end].isspace():
                end += 1
            words.append(raw[pos:end])
            pos = end
    return words, raw[pos:].strip()


def unquoted(note: str) -> str:
    """A note as typed, read as ``baton record`` reads it from a shell: one pair of quotes around
    the whole of it goes (with the escapes a shell resolves inside it); anything else is kept."""
    if len(note) < 2 or note[0] not in "'\"" or note[-1] != note[0]:
        return note
    import shlex

    try:
        words = shlex.split(note)
    except ValueError:  # an unbalanced quote inside: the text is not one quoted word
        return note
    return words[0] if len(words) == 1 else note


def _as_json(args: str, name: str) -> bool:
    if args not in ("", "--json"):
        raise BatonError(f"usage: /baton:{name} [--json]")
    return args == "--json"


def _brief(layout: Layout, env: Mapping[str, str], args: str) -> str:
    from store.checkpoint import brief_news
    from store.cli import views
    from store.monitor.limits import job_news
    from store.state.job import Job

    job = Job(layout, env)
    session = env.get("CLAUDE_CODE_SESSION_ID", "")
    if _as_json(args, "brief"):
        return views.to_json(views.brief_data(job, session))
    gates = views.gates_news(job, env)
    return "baton brief:\n" + job.brief(session, [*job_news(job), *([gates] if gates else []), *brief_news(job)])


def _status(layout: Layout, env: Mapping[str, str], args: str) -> str:
    from store.cli import views
    from store.state import journal
    from store.state.job import Job

    as_json = _as_json(args, "status")
    last, _ = journal.last_records(layout, 5)
    data = views.status_data(Job(layout, env), last, env)
    return views.to_json(data) if as_json else "baton status:\n" + views.status_text(data)


def _record(layout: Layout, env: Mapping[str, str], args: str, command: str = "/baton:record") -> str:
    from store.cli import actions

    words, note = split_words(args, 2)
    note = unquoted(note)
    if len(words) < 2:
        raise BatonError(f"usage: {command} STEP STATUS [NOTE]  (STATUS: running, done, failed, skipped)")
    done = actions.record(layout, env, words[0], words[1], note, person=PERSON.format(command=command))
    return "baton: " + done.message


def _approve(layout: Layout, env: Mapping[str, str], args: str) -> str:
    from store.cli import actions

    words, note = split_words(args, 1)
    note = unquoted(note)
    if not words:
        raise BatonError("usage: /baton:approve STEP [NOTE]")
    from store.cli.origin import nested_session

    nested = nested_session(env)
    if nested:
        raise BatonError(f"refused /baton:approve: this prompt did not come from the person's own session ({nested}). "
                         "Only a person approves, by typing it in their own session. [baton:nested-session]")
    return "baton: " + actions.approve_step(layout, env, words[0], note, PERSON.format(command="/baton:approve"))


def _plan(layout: Layout, env: Mapping[str, str], args: str) -> str:
    import shlex

    from store.base.text import one_line
    from store.cli import actions
    from store.plan.plan import load_plan
    from store.state.job import Job

    if args:
        try:
            words = shlex.split(args)
        except ValueError as exc:
            raise BatonError(f"cannot read the step names: {exc}") from None
        if layout.has_plan():
            raise BatonError(f"{layout.plan} already exists; edit it, or replace it from a terminal with "
                             "`baton init --force STEP...`")
        plan = actions.install_plan(layout, actions.seed_plan_text(words), "/baton:plan", force=False)
        return f"baton: created {layout.plan} with {len(plan.steps)} steps.\n" + Job(layout, env).brief()
    plan = load_plan(layout.plan)
    lines = ["baton plan:", f"plan {layout.plan}" + (f" (job {plan.job})" if plan.job else "")
             + f": {len(plan.steps)} steps"]
    for step in plan.steps:
        policy = [f"{k}={','.join(v)}" for k, v in (("tools", step.tools), ("writes", step.writes),
                                                      ("bash", step.bash)) if v is not None]
        flags = ([f"phase={step.phase}"] if step.phase else []) + policy
        flags += ["needs approval"] if step.needs_approval else []
        flags += [f"validate={step.validate}"] if step.validate else []
        lines.append(f"  {one_line(step.id, 60)}" + (f"  [{'; '.join(flags)}]" if flags else ""))
    return "\n".join(lines)


HANDLERS = {"brief": _brief, "status": _status, "record": _record, "approve": _approve, "plan": _plan}


def no_job(layout: Layout, env: Mapping[str, str]) -> str:
    """Inside Claude Code a person makes a job with /baton:plan (``baton`` may not be on their PATH)."""
    from store.state.location import job_nearby

    other = job_nearby(layout, env)
    near = f"; the job in {other} is not this project's" if other else ""
    return (f"baton: no job in {layout.project_dir} yet{near}. Create one with /baton:plan STEP... "
            "(for example /baton:plan fetch clean train)")


def run(name: str, args: str, layout: Layout, env: Mapping[str, str], bare: bool = False) -> str:
    """The text to show the person; a mistake becomes a one-line explanation, not an exception."""
    if not layout.has_plan() and not (name == "plan" and args):
        return no_job(layout, env)
    try:
        if bare and name == "record":
            return _record(layout, env, args, command="/record")
        return HANDLERS[name](layout, env, args)
    except BatonError as exc:
        return f"baton: {exc.message}"
