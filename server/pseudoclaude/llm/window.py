"""What a local OpenAI-compatible server says about itself: the context window it runs with
and, for llama.cpp, whether its chat template takes tools. Asked once per process, server and
model (a server that cannot be reached at all is asked again next time).

The window of the ``openai`` provider with a ``baseUrl`` that is not api.openai.com, when the
user did not set ``contextWindow``, is the first of these that answers:

1. llama.cpp ``GET /props`` — ``default_generation_settings.n_ctx`` (at the base URL's
   host, without ``/v1``; ``chat_template_caps.supports_tools`` comes from here too);
2. vLLM ``GET /v1/models`` — ``max_model_len`` of the configured model;
3. Ollama ``POST /api/show`` — ``model_info.<architecture>.context_length``, lowered to the
   model's ``num_ctx`` parameter when it sets one.

When none answers (a 404, a refused connection, an answer without the field), the provider's
default stands, said in one line of the server log. The requests are short (a few seconds at
most each) and asynchronous; nothing blocks the event loop.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pseudoclaude.config import DEFAULT_CONTEXT_WINDOWS

if TYPE_CHECKING:
    import httpx2

    from pseudoclaude.config import Settings

log = logging.getLogger("pseudoclaude.llm")

TIMEOUT = 3.0
"""Seconds each question may take (connecting included)."""
OFFICIAL_HOST = "api.openai.com"


@dataclass(frozen=True, slots=True)
class ServerFacts:
    """What the server answered; ``None``: it did not say."""

    window: int | None = None
    source: str = ""
    """Which answer gave the window (``llama.cpp /props``, ``vLLM /v1/models``, ``Ollama
    /api/show``); "" without one."""
    supports_tools: bool | None = None
    """llama.cpp's ``chat_template_caps.supports_tools``."""


def is_local(base_url: str | None) -> bool:
    """Whether ``base_url`` is an OpenAI-compatible server of the user's own (not OpenAI's)."""
    return bool(base_url) and OFFICIAL_HOST not in (base_url or "")


def server_root(base_url: str) -> str:
    """The base URL without a trailing ``/v1`` (where llama.cpp and Ollama answer)."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def wants_window(settings: Settings) -> bool:
    """Whether the settings' window is asked from the server (see the module docstring)."""
    return (settings.provider == "openai" and is_local(settings.base_url)
            and not settings.context_window_set)


_known: dict[tuple[str, str], ServerFacts] = {}
_asking: dict[tuple[str, str],
              tuple[asyncio.AbstractEventLoop, asyncio.Task[tuple[ServerFacts, bool]]]] = {}
_said: set[tuple[str, str, bool]] = set()
"""What the log said, once each: (server, model, whether it answered)."""


def _key(base_url: str, model: str) -> tuple[str, str]:
    return server_root(base_url), model


def known_facts(base_url: str, model: str) -> ServerFacts | None:
    """What was asked already in this process (``None``: not asked yet)."""
    return _known.get(_key(base_url, model))


async def server_facts(base_url: str, model: str, api_key: str | None = None) -> ServerFacts:
    """The server's facts, asked on first use (concurrent callers share one question). A
    server that could not be reached at all is asked again next time."""
    key = _key(base_url, model)
    if key in _known:
        return _known[key]
    loop = asyncio.get_running_loop()
    asking = _asking.get(key)
    if asking is None or asking[0] is not loop:
        asking = (loop, loop.create_task(_ask(base_url, model, api_key)))
        _asking[key] = asking
    facts, reached = await asyncio.shield(asking[1])
    if reached:
        _known[key] = facts
    if _asking.get(key) is asking:
        del _asking[key]
    return facts


def known_window(settings: Settings) -> int | None:
    """The window the settings' server answered, when it was asked and answered."""
    if not wants_window(settings) or settings.base_url is None:
        return None
    facts = known_facts(settings.base_url, settings.model)
    return facts.window if facts is not None else None


def context_window(settings: Settings) -> int:
    """The window to work with: the server's when it answered, else the settings'."""
    return known_window(settings) or settings.context_window


async def discover_window(settings: Settings) -> int | None:
    """Ask the settings' server for its window (once per process) when that is wanted;
    ``None`` when it is not, or when no server answered (then one line in the log says the
    default is used)."""
    if not wants_window(settings) or settings.base_url is None:
        return None
    key_text = settings.api_key.reveal() if settings.api_key else None
    facts = await server_facts(settings.base_url, settings.model, key_text)
    key = _key(settings.base_url, settings.model)
    said = (*key, facts.window is not None)
    if said not in _said:
        _said.add(said)
        if facts.window is None:
            default = DEFAULT_CONTEXT_WINDOWS["openai"]
            log.warning("the server at %s did not say its context window for %s (asked "
                        "llama.cpp /props, vLLM /v1/models, Ollama /api/show): using %s "
                        "tokens; set contextWindow to change it", key[0], settings.model,
                        f"{default:,}")
        else:
            log.info("context window of %s at %s: %s tokens (%s)", settings.model, key[0],
                     f"{facts.window:,}", facts.source)
    return facts.window


async def _ask(base_url: str, model: str, api_key: str | None) -> tuple[ServerFacts, bool]:
    """The facts, and whether the server could be reached at all."""
    import httpx2  # the SDKs' HTTP client, imported when a local server is first asked

    root = server_root(base_url)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(TIMEOUT), headers=headers) as client:
        supports_tools: bool | None = None
        for source, ask in (("llama.cpp /props", _props), ("vLLM /v1/models", _vllm),
                            ("Ollama /api/show", _ollama)):
            try:
                window, tools = await ask(client, root, model)
            except httpx2.TransportError as exc:  # refused, unreachable, timed out
                log.debug("%s at %s: %s", source, root, exc)
                if isinstance(exc, httpx2.ConnectError):
                    return ServerFacts(), False  # the same host answers none of them
                continue
            except (httpx2.HTTPError, ValueError, TypeError, KeyError, AttributeError) as exc:
                log.debug("%s at %s: %s", source, root, exc)
                continue
            supports_tools = tools if tools is not None else supports_tools
            if window is not None:
                return ServerFacts(window, source, supports_tools), True
        return ServerFacts(supports_tools=supports_tools), True


Answer = tuple[int | None, bool | None]


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _json(response: httpx2.Response) -> Any:
    response.raise_for_status()
    return response.json()


async def _props(client: httpx2.AsyncClient, root: str, model: str) -> Answer:
    data = _json(await client.get(f"{root}/props"))
    window = _positive((data.get("default_generation_settings") or {}).get("n_ctx"))
    caps = data.get("chat_template_caps")
    tools = caps.get("supports_tools") if isinstance(caps, dict) else None
    return window, tools if isinstance(tools, bool) else None


async def _vllm(client: httpx2.AsyncClient, root: str, model: str) -> Answer:
    data = _json(await client.get(f"{root}/v1/models"))
    for entry in data.get("data") or []:
        if isinstance(entry, dict) and entry.get("id") == model:
            return _positive(entry.get("max_model_len")), None
    return None, None


async def _ollama(client: httpx2.AsyncClient, root: str, model: str) -> Answer:
    data = _json(await client.post(f"{root}/api/show", json={"model": model}))
    info = data.get("model_info") or {}
    window = _positive(info.get(f"{info.get('general.architecture')}.context_length"))
    if window is None:
        return None, None
    for line in str(data.get("parameters") or "").splitlines():
        name, _, value = line.strip().partition(" ")
        if name == "num_ctx" and value.strip().isdigit():
            window = min(window, int(value.strip())) or window
    return window, None
