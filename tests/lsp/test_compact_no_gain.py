"""A conversation whose older part is too small for a summary to shrink it, through a real
server: the preview says so (``wouldSummarize: false``, ``would not shrink``), and
``pseudoclaude/compact`` then asks the model nothing and its message says why."""

from __future__ import annotations

from typing import Any

from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import COMPACT, COMPACT_PREVIEW, RUN


async def test_a_summary_that_cannot_shrink_is_neither_promised_nor_asked_for(
        client: LanguageClient, env: Any) -> None:
    # The recent window (10,000 tokens, 5 messages) keeps the last three long answers; the
    # older part is the first, short, exchange and a prompt: about 150 tokens, no more than
    # the summary pair's fixed text and half of itself.
    env.fake.add_turns({"text": "a" * 400}, *({"text": "x" * 12_000} for _ in range(3)))
    env.fake.script.rules.insert(0, {"when": {"summary": True},
                                     "reply": {"text": "<summary>the gist</summary>"},
                                     "times": None})
    for i in range(4):
        await env.call(client, RUN, {"prompt": f"question {i}"})
    # each run's memory update asks the model after the run: all four asked before counting
    await env.until(lambda: sum(e["kind"] == "memory" for e in env.events) >= 4,
                    what="the memory updates of the four runs")
    asked = len(env.fake.requests)
    preview = await env.call(client, COMPACT_PREVIEW, {})
    assert not preview["wouldSummarize"] and preview["reason"] == "would not shrink", preview
    assert preview["estimatedAfterTokens"] <= preview["beforeTokens"]
    assert preview["message"].startswith("Nothing would be summarized: a summary would not be "
                                         "smaller than the older messages"), preview["message"]
    result = await env.call(client, COMPACT, {})
    assert len(env.fake.requests) == asked  # no model call
    assert not result["summarized"] and result["reason"] == "would not shrink", result
    assert result["message"].startswith("Nothing was summarized ("), result["message"]
    assert "a summary would not be smaller than the older messages" in result["message"]
    assert "Nothing to compact yet" not in result["message"]
    assert not any(e["kind"] == "warning" for e in env.events)
