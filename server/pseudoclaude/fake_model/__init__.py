"""``pseudoclaude fake-model``: a scripted model server on 127.0.0.1 for tests and offline demos.

It speaks both wire formats the providers use, plain and streamed:

- ``POST /v1/messages`` (Anthropic Messages API; SSE ``message_start`` … ``message_stop`` with
  ``thinking_delta``/``signature_delta`` and ``input_json_delta`` in several fragments);
- ``POST /v1/chat/completions`` (OpenAI Chat Completions; ``data:`` chunks, tool-call argument
  fragments, a usage chunk when ``stream_options.include_usage``, ``[DONE]``).

Both paths are also served without the ``/v1`` prefix, so one base URL
(``http://127.0.0.1:PORT``) works for both SDKs. ``GET /_requests`` returns every request
recorded so far; ``POST /_script`` replaces the script (same JSON as ``--script``). Requests
are recorded without their headers (so never with an API key).

Script (a JSON file, or the same structure as a Python object; a bare list means ``turns``;
the ``#`` comments below are for illustration only; the user's guide to it is
``docs/fake-model.md``)::

    {
      "rules": [                        # checked first, in order, on every request
        {"when": {"has_tools": false},  # e.g. compaction and memory calls
         "reply": {"text": "<summary>...</summary>"}, "times": 1}
      ],
      "turns": [                        # then consumed one per request, in order
        {"thinking": "Let me look.", "tool_calls": [{"name": "read_file",
                                                     "arguments": {"path": "a.py"}}]},
        {"error": "rate_limit"},
        {"text": ["Hel", "lo"], "usage": {"input": 120, "output": 5, "cache_read": 100}}
      ],
      "default": {"text": "..."},      # when no rule matches and no turn is left
      "limit": {"max_tokens": 30000},   # optional: the provider's real context window
      "cache": true,                    # optional: bill prompts through the cache simulation
      "local": {"props": {"default_generation_settings": {"n_ctx": 8192}}}
                                        # optional: a local server's answers about itself
    }

``when`` conditions (all must hold): ``last_user_contains`` (text of the last user message),
``system_contains``, ``body_contains`` (anywhere in the request JSON), ``has_tools`` (bool),
``last_is_tool_result`` (bool), ``protocol`` (``anthropic``/``openai``), ``summary`` (bool: a
compaction's summary request, either the transcript form with its own system prompt or the
cache-friendly form whose last user message starts with ``[Context compaction]``). ``times``
limits how often a rule answers (unlimited without it).

``limit`` (``{"max_tokens": N}``, N a whole number >= 1) is a "provider limit" mode: every
request whose prompt is larger than N tokens is answered, before any rule or turn is looked at
(none is consumed), with the provider's real prompt-too-long error, HTTP 400 — Anthropic
``{"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long:
X tokens > N maximum"}}``, OpenAI ``{"error": {"type": "invalid_request_error", "code":
"context_length_exceeded", "message": "This model's maximum context length is N tokens.
However, your messages resulted in X tokens. Please reduce the length of the messages."}}``.
The prompt size X is an estimate (:func:`prompt_tokens`): the UTF-8 bytes of the JSON of the
request's ``system``, ``messages`` and ``tools`` (compact separators) ÷ 3.5, rounded up. Such
a request is recorded with ``reply: "limit"`` and ``status: 400``. Through the project's
providers both become :class:`~pseudoclaude.llm.errors.PromptTooLong` whose ``str()`` is
``anthropic API error 400: prompt is too long: X tokens > N maximum`` or ``openai API error
400: This model's maximum context length is N tokens. However, ...``.

``cache`` (``true``): every reply's prompt usage (unless the reply scripts ``usage.input``) is
what the provider's prompt cache would bill for that request — Anthropic's breakpoints, reads
and writes, OpenAI's automatic prefix caching — from one :class:`~.cache.PrefixCache` per
server (:mod:`.cache`); each such request is recorded with ``usage`` (``input``,
``cache_read``, ``cache_write``, ``output``).

The two modes the compaction tests use, as examples::

    {"limit": {"max_tokens": 20000}}   # "provider limit": prompt-too-long above 20,000 tokens
    {"rules": [{"when": {"has_tools": false},            # "bare summary": a summary that
                "reply": {"text": "<summary>Work continues.</summary>"}}]}  # omits everything

``local`` (an object with any of ``props``, ``models``, ``show``): the JSON a local
OpenAI-compatible server answers about itself at ``/props`` (llama.cpp), ``/v1/models`` (vLLM)
and ``/api/show`` (Ollama); any other path, and those without an answer, get 404. Such
requests are recorded apart, in :attr:`FakeModelServer.probes`.

Reply keys: ``text`` (a string, or a list of stream chunks), ``chunks`` (split a string into
this many stream pieces, default 3), ``thinking`` (a string, or a list of strings /
``{"thinking", "signature"}`` / ``{"redacted": data}``), ``tool_calls`` (``[{"name",
"arguments": object or raw string, "id"?}]``), ``arg_chunks`` (argument fragments per call,
default 3), ``usage`` (``{"input", "output", "cache_read", "cache_write"}``; ``input`` excludes
cached tokens, the OpenAI ``prompt_tokens`` are ``input + cache_read``), ``stop_reason``
(Anthropic or OpenAI names; default ``tool_use`` with tool calls, else ``end_turn``),
failures: ``error`` (``rate_limit`` 429, ``overloaded`` 529 / OpenAI 503, ``server_error``
500, ``prompt_too_long`` 400, ``auth`` 401, or ``{"status", "type", "message", "code"}``),
``retry_after`` (seconds, sent as a header with ``error``), ``error_after`` (send ``error``
as an in-stream error event after this many events instead of an HTTP status),
``cut_after`` (close the connection after this many stream events: a stream cut mid-way),
``stall`` (seconds to go silent) after ``stall_after`` events (default 0), ``delay`` (seconds
before each event), ``omit_done`` / ``omit_usage`` / ``omit_finish`` (OpenAI: end without
``[DONE]`` / the usage chunk / a ``finish_reason``, as some compatible servers do).

When the script is exhausted the :data:`DEFAULT_REPLY` answers (a short text).
:data:`DEMO_SCRIPT` (the CLI's default) drives an offline demo: the first request with tools
gets a ``read_file`` call for ``README.md``; a request whose last message is a tool result
gets a short answer; a request without tools (compaction or memory update) gets a reply that
contains both a ``<summary>`` block and an empty JSON array ``[]``.

Modules: :mod:`.script` (rules, turns, their checks), :mod:`.reply` (a reply normalised),
:mod:`.anthropic_wire` and :mod:`.openai_wire` (the two wire formats), :mod:`.errors` (injected
failures), :mod:`.tokens` (the ``limit`` mode's estimate), :mod:`.cache` (the prompt-cache
simulation), :mod:`.server` (the HTTP server and
:class:`FakeModelServer`), :mod:`.command` (``pseudoclaude fake-model``).
"""

from pseudoclaude.fake_model.anthropic_wire import anthropic_events, anthropic_message
from pseudoclaude.fake_model.command import main
from pseudoclaude.fake_model.errors import error_body, limit_error
from pseudoclaude.fake_model.openai_wire import openai_chunks, openai_completion
from pseudoclaude.fake_model.script import (
    DEFAULT_REPLY,
    DEMO_SCRIPT,
    Script,
    ScriptError,
    request_facts,
)
from pseudoclaude.fake_model.server import HOST, FakeModelServer
from pseudoclaude.fake_model.tokens import BYTES_PER_TOKEN, prompt_tokens

__all__ = [
    "BYTES_PER_TOKEN",
    "DEFAULT_REPLY",
    "DEMO_SCRIPT",
    "HOST",
    "FakeModelServer",
    "Script",
    "ScriptError",
    "anthropic_events",
    "anthropic_message",
    "error_body",
    "limit_error",
    "main",
    "openai_chunks",
    "openai_completion",
    "prompt_tokens",
    "request_facts",
]
