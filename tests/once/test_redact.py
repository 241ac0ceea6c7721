"""What of a side effect's command and output goes into the ledger: secret-looking values masked."""

from __future__ import annotations

from typing import List

import pytest

from store.once.redact import command, text


@pytest.mark.parametrize("argv, shown", [
    (["curl", "-H", "Authorization: Bearer abc.def-123", "https://x"],
     "curl -H 'Authorization: Bearer ***' https://x"),
    (["curl", "-u", "me:hunter2", "https://x"], "curl -u 'me:***' https://x"),
    (["tool", "--token", "s3cr3t"], "tool --token '***'"),
    (["tool", "--api-key=s3cr3t", "--name=ok"], "tool '--api-key=***' --name=ok"),
    (["gh", "pr", "create", "--title", "Fix token parsing"], "gh pr create --title 'Fix token parsing'"),
    (["post", "password=abc&user=me"], "post 'password=***&user=me'"),
    (["send", "ghp_" + "a" * 36], "send '***'"),
    (["aws", "AKIA" + "B" * 16], "aws '***'"),
    (["./notify.sh", "team"], "./notify.sh team"),
])
def test_commands_keep_their_shape_and_lose_their_secrets(argv: List[str], shown: str) -> None:
    assert command(argv) == shown


def test_output_tails_are_masked_too() -> None:
    out = '{"id": 7, "access_token": "ya29.abcdef", "note": "ok"}\nsk-' + "x" * 20 + "\n"
    assert text(out) == '{"id": 7, "access_token": "***", "note": "ok"}\n***\n'
