"""A deterministic session workload: what an agent does to its conversation, scripted.

Used by ``pseudoclaude demo``, the crash test and the session benchmark. The same seed always
gives the same operations, so a parent process can rebuild in memory the exact conversation a
child process had acknowledged before it was killed.

Run as a process: ``python -m pseudoclaude.session.simulate --data-dir D --seed S --ops N``
prints ``session <id>`` and then ``ack <i>`` after operation ``i`` returned (its log lines are
fsynced by then).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from pseudoclaude.conversation import Conversation, Offload
from pseudoclaude.llm.types import Message, ToolCall, ToolResult

_WORDS = (
    "parser token file read write build test error fix module import func value ünïcödé "
    "日本語 naïve emoji🙂 path json line state"
).split()


@dataclass
class Op:
    kind: str  # user | assistant | calls | result | offload | replace
    message: Message | None = None
    offload: Offload | None = None
    keep: list[str] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def scripted_ops(seed: int, count: int, *, big: int = 200_000) -> Iterator[Op]:
    """``count`` operations. ``big`` bounds the size of the occasional large tool result."""
    rng = random.Random(seed)
    history: list[Message] = []
    pending: list[ToolCall] = []
    call_no = 0
    for _ in range(count):
        if pending:  # finish the round first, as the runner does
            call = pending.pop(0)
            size = rng.choice((40, 400, 4000, rng.randint(1, big)))
            content = (_text(rng, 8) + "\n") * max(1, size // 60)
            msg = Message(role="user", tool_result=ToolResult(
                call.id, call.name, content, rng.random() < 0.1))
            history.append(msg)
            yield Op("result", message=msg)
            continue
        roll = rng.random()
        results = [m.tool_result.call_id for m in history if m.tool_result is not None]
        if roll < 0.25:
            msg = Message(role="user", content=_text(rng, rng.randint(1, 40)))
        elif roll < 0.45:
            msg = Message(role="assistant", content=_text(rng, rng.randint(1, 80)))
        elif roll < 0.75:
            calls = []
            for _ in range(rng.randint(1, 3)):
                call_no += 1
                args: object = {"path": f"src/{_text(rng, 1)}.py", "limit": rng.randint(1, 99)}
                if rng.random() < 0.1:
                    args = '{"path": "unterminated'  # invalid JSON arguments are kept
                calls.append(ToolCall(f"call_{seed}_{call_no}", "read_file", args))
            pending = list(calls)
            msg = Message(role="assistant", content=_text(rng, rng.randint(0, 10)),
                          tool_calls=calls)
        elif roll < 0.88 and results:
            call_id = rng.choice(results)
            preview = f"[content offloaded] {call_id}\n" + _text(rng, 10)
            yield Op("offload", offload=Offload(call_id, f"tool-results/{call_id}.txt",
                                                rng.randint(50_001, 900_000), preview),
                     keep=rng.sample(results, min(len(results), rng.randint(0, 3))))
            continue
        elif roll < 0.94 and len(history) > 4:
            cut = _round_start(history, rng.randint(len(history) // 2, len(history) - 1))
            history = [Message(role="user", content="[summary] " + _text(rng, 60)),
                       Message(role="assistant", content="Understood."), *history[cut:]]
            yield Op("replace", messages=list(history))
            continue
        else:
            msg = Message(role="user", content=_text(rng, 3))
        history.append(msg)
        yield Op(msg.role if not msg.tool_calls else "calls", message=msg)


def _round_start(history: list[Message], index: int) -> int:
    """Move ``index`` back so it never lands between a tool call and its results."""
    while index > 0 and history[index].tool_result is not None:
        index -= 1
    return index


def apply(conversation: Conversation, op: Op) -> None:
    if op.kind == "offload":
        assert op.offload is not None
        conversation.apply_offloads([op.offload], op.keep)
    elif op.kind == "replace":
        conversation.replace("compact", op.messages)
    else:
        assert op.message is not None
        conversation.append(op.message)


def expected_states(seed: int, count: int, *, big: int = 200_000) -> list[list[Message]]:
    """``states[k]`` is the conversation after the first ``k`` operations."""
    conversation = Conversation()
    states = [conversation.messages()]
    for op in scripted_ops(seed, count, big=big):
        apply(conversation, op)
        states.append(conversation.messages())
    return states


def main(argv: list[str] | None = None) -> int:
    from pseudoclaude.session.resume import new_session
    from pseudoclaude.session.store import SessionStore

    parser = argparse.ArgumentParser(prog="python -m pseudoclaude.session.simulate")
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ops", type=int, default=100)
    parser.add_argument("--big", type=int, default=200_000)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds between operations")
    args = parser.parse_args(argv)
    opened = new_session(SessionStore(args.data_dir), model="scripted-model")
    print(f"session {opened.session_id}", flush=True)
    for i, op in enumerate(scripted_ops(args.seed, args.ops, big=args.big), start=1):
        apply(opened.conversation, op)
        print(f"ack {i}", flush=True)
        if args.delay:
            time.sleep(args.delay)
    opened.writer.close()
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
