"""The editor as the agent's tools see it, over LSP (SPEC §12 "The agent lives in the editor").

- Documents: the client syncs its open documents (``didOpen``/``didChange``/``didClose``,
  incremental; :class:`Documents` keeps their text). :meth:`LspEditor.open_text` is the text
  and version of an open ``file:`` document, looked up by its resolved path; after
  ``didClose`` the disk is read again.
- Edits: ``workspace/applyEdit`` with the smallest text edits
  (:func:`~pseudoclaude.workspace.text_edits`), naming the document's version when the
  client takes ``documentChanges``; ``applied: false`` or an error response is a tool error
  with the client's reason. Until the client's ``didChange`` for it arrives (Neovim sends it
  debounced), reads see the text the edit made.
- Diagnostics: ``pseudoclaude/diagnostics`` to a client that set
  ``experimental.pseudoclaude.diagnostics: true``.
- Code actions: *Explain*, *Fix*, *Ask about selection* on a range (commands of the client's:
  :data:`~pseudoclaude.api.protocol.CODE_ACTIONS`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from lsprotocol import types
from pygls.uris import to_fs_path

from pseudoclaude.api import protocol as p
from pseudoclaude.errors import one_line
from pseudoclaude.lsp.positions import apply_change, offset_at, position_at
from pseudoclaude.workspace import Diagnostic, OpenText, Position, Range, ToolError, text_edits

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger("pseudoclaude.lsp")

APPLY_TIMEOUT = 30.0
"""An ``applyEdit`` the client has not answered by then fails (the user may be asked)."""
_SEVERITIES: dict[int, p.Severity] = {1: "error", 2: "warning", 3: "info", 4: "hint"}


def client_offers(capabilities: Any, key: str) -> bool:
    """Whether the client's ``initialize`` capabilities set
    ``experimental.pseudoclaude.<key>: true``."""
    experimental = getattr(capabilities, "experimental", None)
    section = experimental.get(p.EXPERIMENTAL_KEY) if isinstance(experimental, dict) else None
    return isinstance(section, dict) and section.get(key) is True


@dataclass
class _Document:
    text: str
    version: int | None
    near: tuple[int, int] | None = None  # a known line start, where the last change was
    made: tuple[str, int | None] | None = None
    """(text, version) an applied edit made, until the client's change for it arrives."""


class Documents:
    """The client's open documents (shared by the server's workspaces): their text, kept up to
    date from ``didOpen``/``didChange``/``didClose`` here rather than by pygls, whose
    incremental change re-splits the whole text (13 ms a keystroke in a 1 MB file; here
    well under 1 ms)."""

    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        self._docs: dict[str, _Document] = {}  # uri -> document
        self._uris: dict[str, str] = {}  # resolved path -> uri
        self._lock = threading.Lock()

    def opened(self, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        uri = item.uri
        with self._lock:
            self._docs[uri] = _Document(item.text, item.version)
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if path is not None:
            key = str(Path(path).resolve())
            with self._lock:
                self._uris[key] = uri

    def changed(self, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        encoding = self.encoding
        with self._lock:
            doc = self._docs.get(uri)
            if doc is None:
                log.info("a change of %s, which is not open, is ignored", uri)
                return
            text, near = doc.text, doc.near
            for change in params.content_changes:
                if isinstance(change, types.TextDocumentContentChangePartial):
                    rng = change.range
                    text, near = apply_change(
                        text, (rng.start.line, rng.start.character),
                        (rng.end.line, rng.end.character), change.text, encoding, near)
                else:
                    text, near = change.text, None
            doc.text, doc.version, doc.near, doc.made = (
                text, params.text_document.version, near, None)

    def closed(self, uri: str) -> None:
        with self._lock:
            self._docs.pop(uri, None)
            for key in [k for k, v in self._uris.items() if v == uri]:
                del self._uris[key]

    def uri_of(self, path: Path) -> str | None:
        with self._lock:
            return self._uris.get(str(path))

    def document(self, uri: str) -> OpenText | None:
        """An open document's text (with an applied edit the client has not confirmed yet)
        and its version; ``None`` when it is not open."""
        with self._lock:
            doc = self._docs.get(uri)
            if doc is None:
                return None
            text, version = doc.made if doc.made is not None else (doc.text, doc.version)
        return OpenText(text, version)

    def text(self, path: Path) -> OpenText | None:
        uri = self.uri_of(path)
        return None if uri is None else self.document(uri)

    def made(self, uri: str, text: str, version: int | None) -> None:
        """An applied edit's text, if the client's change for it has not arrived yet."""
        with self._lock:
            doc = self._docs.get(uri)
            if doc is not None and doc.version == version:
                doc.made = (text, version)

    @property
    def encoding(self) -> str:
        encoding = self.server.workspace.position_encoding
        return str(getattr(encoding, "value", encoding) or "utf-16")


class LspEditor:
    """The editor of one workspace folder (``uri``, ``root``) for the agent's tools."""

    def __init__(self, server: LanguageServer, documents: Documents, uri: str, root: Path
                 ) -> None:
        self.server = server
        self.documents = documents
        self.uri = uri
        self.root = root.resolve()

    @property
    def can_apply_edit(self) -> bool:
        caps = self.server.client_capabilities
        return bool(caps and caps.workspace and caps.workspace.apply_edit)

    @property
    def can_diagnose(self) -> bool:
        return client_offers(self.server.client_capabilities, p.DIAGNOSTICS_CAPABILITY)

    @property
    def every_file(self) -> bool:
        return False  # only the documents the client opened

    def open_text(self, path: Path) -> OpenText | None:
        return self.documents.text(path)

    async def apply_edit(self, path: Path, label: str, before: OpenText, after: str) -> None:
        if not self.can_apply_edit:
            raise ToolError("unsaved", f"{label} has unsaved changes in the editor, and the "
                            "editor cannot take the agent's edits; nothing was changed")
        uri = self.documents.uri_of(path)
        now = self.documents.text(path)
        if uri is None or now is None:
            raise ToolError("changed", f"{label} was closed in the editor since it was read; "
                            "nothing was written (read it again)")
        if now.version != before.version or now.text != before.text:
            raise ToolError("changed", f"{label} changed in the editor since it was read; "
                            "nothing was written (read it again)")
        encoding = self.documents.encoding
        edits = []
        for edit in text_edits(before.text, after):
            start = position_at(before.text, edit.start, encoding)
            end = position_at(before.text, edit.end, encoding)
            edits.append(types.TextEdit(range=types.Range(
                start=types.Position(line=start[0], character=start[1]),
                end=types.Position(line=end[0], character=end[1])), new_text=edit.new))
        if not edits:
            return
        answer = await self._apply(uri, before.version, edits, label)
        if not answer.applied:
            reason = answer.failure_reason or "no reason given"
            raise ToolError("editor_error", f"the editor did not apply the edit of {label}: "
                            f"{reason}; nothing was written")
        self.documents.made(uri, after, before.version)  # unless its didChange came first

    async def _apply(self, uri: str, version: int | None, edits: list[types.TextEdit],
                     label: str) -> types.ApplyWorkspaceEditResult:
        caps = self.server.client_capabilities
        edit_caps = caps.workspace.workspace_edit if caps and caps.workspace else None
        if edit_caps is not None and edit_caps.document_changes:
            workspace_edit = types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=uri, version=version),
                edits=list(edits))])
        else:
            workspace_edit = types.WorkspaceEdit(changes={uri: edits})
        params = types.ApplyWorkspaceEditParams(edit=workspace_edit,
                                                label=f"PseudoClaude: edit {label}")
        try:
            return await asyncio.wait_for(self.server.workspace_apply_edit_async(params),
                                          APPLY_TIMEOUT)
        except TimeoutError:
            raise ToolError("editor_error", f"the editor did not answer the edit of {label} "
                            f"within {APPLY_TIMEOUT:g} s; nothing was written") from None
        except ToolError:
            raise
        except Exception as exc:  # an error response: the client's reason
            raise ToolError("editor_error", f"the editor refused the edit of {label}: "
                            f"{one_line(exc)}; nothing was written") from None

    async def diagnostics(self, paths: Sequence[str] | None) -> list[Diagnostic]:
        params = p.DiagnosticsParams(workspace=self.uri,
                                     paths=list(paths) if paths is not None else msgspec.UNSET)
        answer = await self.server.protocol.send_request_async(p.DIAGNOSTICS,
                                                               p.to_wire(params))
        return decode_diagnostics(answer, None if paths is None else set(paths))

    # -- code actions ----------------------------------------------------------------------
    def relative(self, uri: str) -> str | None:
        """The workspace-relative path (``/``) of a document in this folder, else None."""
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if path is None:
            return None
        resolved = Path(path).resolve()
        if not resolved.is_relative_to(self.root):
            return None
        return resolved.relative_to(self.root).as_posix()

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        """*Explain*, *Fix* and *Ask about selection* on a non-empty range; on an empty one,
        *Fix* when the client sent diagnostics there."""
        path = self.relative(params.text_document.uri)
        doc = self.documents.document(params.text_document.uri)
        if path is None or doc is None:
            return []
        text, encoding = doc.text, self.documents.encoding
        rng = params.range
        problems = [d for d in (_diagnostic(path, d) for d in params.context.diagnostics)
                    if d is not None]
        empty = (rng.start.line, rng.start.character) == (rng.end.line, rng.end.character)
        if empty:
            if not problems:
                return []
            first = min(d.range.start.line for d in problems)
            last = max(d.range.end.line for d in problems)
            rng = types.Range(start=types.Position(line=first, character=0),
                              end=types.Position(line=last + 1, character=0))
        start = offset_at(text, rng.start.line, rng.start.character, encoding)
        end = offset_at(text, rng.end.line, rng.end.character, encoding)
        selected = Range(start=Position(line=rng.start.line, character=rng.start.character),
                         end=Position(line=rng.end.line, character=rng.end.character))
        actions = []
        for command, title in p.CODE_ACTIONS.items():
            fix = command.endswith(".fix")
            if empty and not fix:
                continue
            arguments = p.CodeActionArguments(
                path=path, range=selected, text=text[start:end],
                diagnostics=problems if fix and problems else msgspec.UNSET)
            actions.append(types.CodeAction(
                title=title, kind=types.CodeActionKind.QuickFix if fix else None,
                diagnostics=list(params.context.diagnostics) if fix and problems else None,
                command=types.Command(title=title, command=command,
                                      arguments=[p.to_wire(arguments)])))
        return actions


def _diagnostic(path: str, d: types.Diagnostic) -> Diagnostic | None:
    severity = _SEVERITIES.get(int(d.severity or 1), "error")
    rng = Range(start=Position(line=d.range.start.line, character=d.range.start.character),
                end=Position(line=d.range.end.line, character=d.range.end.character))
    return Diagnostic(path=path, range=rng, severity=severity, message=d.message,
                      source=d.source if d.source else msgspec.UNSET)


def decode_diagnostics(answer: Any, paths: set[str] | None) -> list[Diagnostic]:
    """The client's answer to ``pseudoclaude/diagnostics``, entries that do not fit (or are not
    among ``paths``) left out."""
    raw = answer.get("diagnostics") if isinstance(answer, dict) else None
    if raw == {}:  # an empty Lua table may be encoded as an object
        raw = []
    if not isinstance(raw, list):
        raise ToolError("editor_error", "the editor's diagnostics answer has no "
                        "`diagnostics` list")
    out: list[Diagnostic] = []
    for entry in raw:
        try:
            diagnostic = msgspec.convert(entry, Diagnostic)
        except msgspec.ValidationError as exc:
            log.info("a diagnostic that does not fit is left out: %s", exc)
            continue
        if paths is None or diagnostic.path in paths:
            out.append(diagnostic)
    return out
