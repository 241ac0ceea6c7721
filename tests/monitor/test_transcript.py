"""Reading a transcript from an offset: each model response counted once however many entries it
has, only whole lines, the cost when Claude Code wrote one (and "no cost" when it did not), gate
refusals (found without ``re``), subagent transcripts, and transcripts that grow, are cut, shrink or
hold huge lines."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st
from transcripts import assistant, cost_state, noise, subagent_transcript, tool_result, usage, write

from store.monitor import transcript
from store.monitor.clock import epoch

TS = "2026-11-30T10:39:02.211Z"


def totals(reading: transcript.Reading) -> list[int]:
    return [sum(m.tokens[i] for m in reading.messages) for i in range(4)]


def test_a_message_written_as_three_entries_is_counted_once(tmp_path: Path) -> None:
    lines = noise() + assistant("msg_1", "req-1", usage(101, 8, 1000, 51), TS, ("text", "tool_use", "tool_use"))
    reading = transcript.read(str(write(tmp_path / "t.jsonl", lines)))
    assert totals(reading) == [101, 8, 1000, 51]
    assert [m.new for m in reading.messages] == [True, False, False]
    assert reading.messages[0].ts == epoch(TS)
    assert reading.costs == [] and reading.priced == 0.0, "no cost-state entry: no cost, not a cost of zero"


def test_usage_that_grows_across_the_entries_of_one_message_adds_only_the_growth(tmp_path: Path) -> None:
    lines = (assistant("m", "r", usage(100, 3), TS) + assistant("m", "r", usage(100, 40), TS)
             + assistant("m2", "r2", usage(5, 5), TS))
    reading = transcript.read(str(write(tmp_path / "t.jsonl", lines)))
    assert totals(reading) == [105, 45, 0, 0]
    assert sum(m.new for m in reading.messages) == 2


def test_a_message_split_by_a_read_is_not_counted_twice(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", assistant("m", "r", usage(10, 20), TS, ("text",)))
    first = transcript.read(str(path))
    write(path, assistant("m", "r", usage(10, 20), TS, ("tool_use",)) + assistant("n", "s", usage(1, 2), TS),
          append=True)
    second = transcript.read(str(path), first.offset, first.recent)
    assert totals(first) == [10, 20, 0, 0] and totals(second) == [1, 2, 0, 0]
    assert second.offset == path.stat().st_size


def test_the_cut_last_line_waits_for_the_rest(tmp_path: Path) -> None:
    whole = assistant("m", "r", usage(7, 1), TS)
    cut = assistant("n", "s", usage(1000, 1000), TS)[0]
    path = write(tmp_path / "t.jsonl", whole + [cut[:60]], end="")
    reading = transcript.read(str(path))
    assert totals(reading) == [7, 1, 0, 0]
    assert reading.offset == len(whole[0]) + 1, "the cut line is not consumed"
    with path.open("a") as handle:
        handle.write(cut[60:] + "\n")
    later = transcript.read(str(path), reading.offset, reading.recent)
    assert totals(later) == [1000, 1000, 0, 0]


def test_a_transcript_that_grows_between_reads_is_read_from_where_it_was_left(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    offset, recent, seen = 0, [], [0, 0, 0, 0]
    for turn in range(1, 6):
        response = assistant(f"m{turn}", f"r{turn}", usage(turn, 2 * turn, 10 * turn), TS, ("text", "tool_use"))
        write(path, noise() + response, append=True)
        reading = transcript.read(str(path), offset, recent)
        offset, recent = reading.offset, reading.recent
        seen = [a + b for a, b in zip(seen, totals(reading))]
    assert seen == [15, 30, 150, 0]
    assert transcript.read(str(path), offset, recent).messages == [], "nothing new: nothing counted"


def test_cost_state_gives_the_total_and_the_tokens_it_covers(tmp_path: Path) -> None:
    lines = assistant("m", "r", usage(20, 20), TS) + [cost_state(0.00048, {"input": 20, "output": 20})]
    reading = transcript.read(str(write(tmp_path / "t.jsonl", lines)))
    [cost] = reading.costs
    assert (cost.usd, cost.covered) == (0.00048, 40)


def test_a_resumed_session_appends_a_cumulative_cost(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(path, assistant("m1", "r1", usage(10, 10), TS) + [cost_state(0.002267, {"input": 10, "output": 10})])
    first = transcript.read(str(path))
    write(path, assistant("m2", "r2", usage(5, 5), TS) + [cost_state(0.003744, {"input": 15, "output": 15})],
          append=True)
    second = transcript.read(str(path), first.offset, first.recent)
    assert [(c.usd, c.covered) for c in second.costs] == [(0.003744, 30)]
    assert totals(second) == [5, 5, 0, 0]


def test_older_per_message_prices_are_summed_once_per_message(tmp_path: Path) -> None:
    entries = [json.loads(line) for line in assistant("m", "r", usage(3, 3), TS, ("text", "tool_use"))]
    for entry in entries:
        entry["costUSD"] = 0.25
    reading = transcript.read(str(write(tmp_path / "t.jsonl", [json.dumps(e) for e in entries])))
    assert reading.priced == 0.25


def test_gate_refusals_are_counted_by_code(tmp_path: Path) -> None:
    spaced = json.dumps(json.loads(tool_result("baton denied Write: ... [baton:own-files]", True, TS)))
    lines = [tool_result("PreToolUse:Bash hook error: baton denied Bash: ... [baton:writes]", True, TS), spaced,
             tool_result("ok [baton:writes] in an answer that did not fail", False, TS),
             tool_result("Exit code 1", True, TS)]
    reading = transcript.read(str(write(tmp_path / "t.jsonl", lines)))
    assert [r.code for r in reading.refusals] == ["writes", "own-files"]
    assert [(r.tool, r.reason) for r in reading.refusals] == [("Bash", "baton denied Bash: ..."),
                                                              ("", "baton denied Write: ...")]


def test_a_refusal_names_the_call_it_refused(tmp_path: Path) -> None:
    """The tool and its command or path come from the tool_use block the refusal answers."""
    use = assistant("m1", "r1", usage(1, 1), TS, ("text", "tool_use"))
    use[1] = use[1].replace('"echo hi"', '"echo pwn >> .baton/steps.jsonl"')
    denied = ("PreToolUse:Bash hook error: baton denied this command: it writes .baton/steps.jsonl\n"
              "and more [baton:own-files]")
    lines = use + [tool_result(denied, True, TS, "toolu_m1_1"), tool_result("x [baton:writes]", True, TS, "toolu_9")]
    first, second = transcript.read(str(write(tmp_path / "t.jsonl", lines))).refusals
    assert (first.code, first.tool, first.target) == ("own-files", "Bash", "echo pwn >> .baton/steps.jsonl")
    assert first.reason == "baton denied this command: it writes .baton/steps.jsonl and more"
    assert (second.code, second.tool, second.target, second.reason) == ("writes", "", "", "x")


@given(st.lists(st.sampled_from(["[baton:", "[baton:", "]", "]", "-", "a", "own", "Z", "\u00e9", "1", " ", "["]),
                max_size=12).map("".join))
@example("[baton:own-files] [baton:-a] [baton:a-] [baton:a--b] [baton:\u00e9] [baton:] [baton:[baton:writes]")
def test_refusal_codes_are_what_the_pattern_of_the_gate_s_codes_finds(text: str) -> None:
    assert transcript.refusal_codes(text) == re.findall(r"\[baton:([a-z]+(?:-[a-z]+)*)\]", text)


def test_bad_counts_and_bad_lines_count_nothing(tmp_path: Path) -> None:
    bad = {"type": "assistant", "message": {"id": "x", "usage": {"input_tokens": "9", "output_tokens": 2.5,
                                                                "cache_read_input_tokens": None,
                                                                "cache_creation_input_tokens": -4}}}
    lines = [json.dumps(bad), '{"type": "assistant", "message": {"usage": ', "[1, 2]", '"usage"', "null"]
    reading = transcript.read(str(write(tmp_path / "t.jsonl", lines)))
    assert totals(reading) == [0, 0, 0, 0]
    assert reading.skipped == 1  # the line with "usage" that is not JSON ('"usage"' is JSON: a string)


def test_a_line_longer_than_a_chunk_is_stepped_over(tmp_path: Path) -> None:
    huge = json.dumps({"type": "user", "message": {"content": "usage " * 5000}})
    lines = [huge] + assistant("m", "r", usage(4, 4), TS)
    path = write(tmp_path / "t.jsonl", lines)
    first = transcript.read(str(path), chunk=1024)
    assert first.offset == len(huge) + 1 and first.messages == []
    assert totals(transcript.read(str(path), first.offset, first.recent, chunk=1024)) == [4, 4, 0, 0]


def test_a_transcript_that_shrank_is_read_from_its_new_end(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", assistant("m", "r", usage(4, 4), TS))
    reading = transcript.read(str(path), offset=path.stat().st_size + 500)
    assert reading.offset == path.stat().st_size and reading.messages == []


def test_subagent_transcripts_are_found_next_to_the_session_transcript(tmp_path: Path) -> None:
    main = write(tmp_path / "proj" / "sess.jsonl", assistant("m", "r", usage(1, 1), TS))
    assert transcript.subagent_transcripts(str(main)) == []
    first = write(subagent_transcript(main, "b2"), assistant("s", "r", usage(2, 2), TS, sidechain=True))
    second = write(subagent_transcript(main, "a1", meta=False), assistant("t", "r", usage(3, 3), TS, sidechain=True))
    assert transcript.subagent_transcripts(str(main)) == [str(second), str(first)]
    assert transcript.read(str(first)).messages[0].sidechain
