// Smoke test of the packaged extension in a real VS Code: code-server + Debian Chromium driven by
// playwright-core. The .vsix installs offline; the PseudoClaude icon is in the activity bar before
// anything runs; its chat view (a webview, reached through its frame) takes a prompt and shows the
// streamed Markdown answer, a tool card and an approval (a pending card beside the modal dialog);
// with `pseudoclaude.memory.mode: confirm` the memory update after a run proposes a note, which
// the Memory view lists and opens as a diff whose right side is edited, saved (nothing written)
// and accepted with the diff's title button (the note has the edit); a workspace file typed into
// (unsaved) is the chat's chip with its selection (× leaves it out), a prompt goes with the
// selected unsaved line and the run's edit_file changes the document in the editor (still
// unsaved, the disk as it was, Ctrl+Z takes it back); Explain from the editor's context menu;
// "PseudoClaude: Ask" still answers in the output channel (and in the chat); the status bar shows
// the meter; Stop cancels; a reload restores the transcript from the server's log; Compact shows
// its preview first; after it a reload shows the summarized part dimmed ("not in context"), with
// failed and denied calls (a denial tells the agent why); permission modes: the prompt box's mode
// picker (plan refuses a command without asking), Shift+Tab and Set Permission Mode, an approval's
// "Always allow" (its rule written to permissions.local.yaml, the next call not asked), Show
// Permissions; typing / in the prompt lists the slash commands; in a new session, a
// prompt's "Fork from here" starts a new session before it and its "Rewind to here…" lists the
// files (a diff of each), puts them back on disk and takes the conversation back. Plan mode, in a
// new session: the plan's card (Markdown; Keep planning with feedback, then Approve and accept
// edits, which the mode picker follows) and the task list's checklist above the prompt box as the
// run goes (after a reload too; none for a new session). Then MCP servers,
// in a second folder: one in the Machine settings (`pseudoclaude.mcp.servers`: the repository's
// echo test server), one in the folder's .mcp.json, whose approval question shows in the chat
// when the folder opens (Allow once); a run calls mcp__echo__echo (its approval card, then the
// tool card) and the header's MCP menu lists both servers ready, with their tools. Then sessions
// at once, in a third folder (a git repository): a terminal writes one session while the chat
// streams another (both marked running), a prompt for the busy one shows Fork / Wait and Wait
// sends it when the terminal is done; a session in a git worktree (from the chat's … menu): its
// branch under the header, Remove refused for changes not applied, Changes with a file's diff,
// Apply refused for a conflict then applied, Remove.
// The server starts from `pseudoclaude.server.command` in code-server's
// Machine settings, with a PATH that has no `pseudoclaude` on it (so only that setting can work).
// Screenshots of the chat go to --media (the README's pictures).
//
//   node smoke.mjs --python <venv python> --vsix <pseudoclaude.vsix> --out <dir> [--media <dir>]
//                  [--theme 'Default Dark Modern']
//
// Run with Node 24 first on PATH (code-server 4.139 needs it); `run.sh` sets everything up.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const { values: opts } = parseArgs({
  options: {
    python: { type: 'string' },
    vsix: { type: 'string' },
    out: { type: 'string', default: join(here, 'out') },
    media: { type: 'string' },
    theme: { type: 'string' },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
    timeout: { type: 'string', default: '120000' },
    keep: { type: 'boolean', default: false },
  },
});
if (!opts.python || !opts.vsix) {
  console.error('usage: node smoke.mjs --python PYTHON --vsix FILE [--out DIR]');
  process.exit(2);
}
const TIMEOUT = Number(opts.timeout);
const ANSWER = 'I read README.md with read_file.';
const PROMPT = 'What is this project?';
const APPROVAL_PROMPT = 'please run the tests';
const SLOW_PROMPT = 'a slow question';
const CHAT_PROMPT = 'Tell me about this project';
const CHAT_HEADING = 'What the demo project does';
const CHAT_ANSWER = [
  `## ${CHAT_HEADING}\n\n`,
  'The README describes a **small demo** that keeps:\n\n',
  '- visible, resumable *sessions*\n',
  '- Markdown **memory** notes\n\n',
  'Try it offline with:\n\n',
  '```sh\npseudoclaude demo\n```\n\n',
  'See `README.md` for the details.',
];
const TESTS_PASSED = 'The tests passed.';
const EDIT_PROMPT = 'please give the README a better title';
const NEW_TITLE = '# Demo project: sessions and memory';
const EDITED = 'I gave the README a clearer title.';
// A run whose memory update (memory.mode: confirm) proposes a project note.
const MEMORY_PROMPT = 'From now on run the tests with make check: it runs the linters first';
const MEMORY_ANSWER = 'Understood: I will run the tests with `make check` from now on.';
const NOTE = {
  action: 'create',
  level: 'project',
  type: 'project_knowledge',
  title: 'Running the tests',
  summary: 'Run the tests with make check, which runs the linters first.',
  slug: 'running-the-tests',
  content: [
    'Run the whole test suite with `make check`: it runs the linters first, then the tests.',
    '',
    '- Use it instead of calling the test runner directly.',
    '- Ask the user before skipping the linters.',
  ].join('\n'),
};
const NOTE_FILE = `${NOTE.type}_${NOTE.slug}.md`;
// Typed into the proposal's right side before it is accepted.
const NOTE_EDIT = '- Edited in review: the linters need Node 20.';
// A failed call (a file that is not there), a denied one, then a large read: the earlier runs
// leave the recent window, so Compact summarizes them and a reload shows them dimmed.
const MISSING_PROMPT = 'What is in notes/todo.md?';
const MISSING_ANSWER = 'There is no notes/todo.md in this project.';
const DENY_PROMPT = 'Clean the build folder';
const DENIED_ANSWER = 'Understood: I left the build folder alone.';
// What the denial tells the agent (typed into the card's "Tell the agent why" field).
const DENY_MESSAGE = 'Keep the build folder: run make clean instead.';
// Permission modes: plan mode refuses a command without asking; "Always allow" on `make test`
// adds Bash(make test:*) to permissions.local.yaml, and the next `make test` is not asked.
const PLAN_PROMPT = 'Build the project';
const PLAN_ANSWER = 'Plan mode: I cannot run the build yet. The plan: run make build, then the tests.';
const ALWAYS_PROMPT = 'Run the unit tests';
const ALWAYS_ANSWER = 'The unit tests passed.';
const ALWAYS_AGAIN = 'Run them once more';
const ALWAYS_AGAIN_ANSWER = 'They passed again.';
const ALWAYS_RULE = 'Bash(make test:*)';
const BIG_PROMPT = 'Summarize the benchmark log';
const BIG_ANSWER = 'The benchmark log has 900 runs, all of them steady.';
const BIG_AGAIN = 'Read the benchmark log again';
const BIG_AGAIN_ANSWER = 'Read it again: nothing changed.';
// Rewind and fork, in a new session: a first prompt, then one whose run creates a file and
// edits README.md; "Fork from here" on it, then (back in the original) "Rewind to here…".
const REWIND_FIRST = 'Which files does this project have?';
const REWIND_FIRST_ANSWER = 'README.md and bench.log.';
const REWIND_PROMPT = 'Start a changelog and mention it in the README';
const REWIND_ANSWER = 'I started CHANGES.md and mentioned it in the README.';
const CHANGES = '# Changes\n\n- Started the changelog.\n';
const README_LINE = 'It keeps sessions and memory.';
const README_EDITED = [
  README_LINE, '', '## Changes', '', 'The changes of each release are listed in CHANGES.md:', '',
  '- what was added,', '- what was fixed,', '- what was removed.',
].join('\n');
// ~40 KB: two reads of it fill more than the recent window (a much larger result is offloaded).
const BIG_LOG = Array.from({ length: 800 }, (_, i) => `run ${i}: sessions, compaction and memory.\n`).join('');
// MCP: the repository's test server (over stdio), as a user server and as a project server.
const ECHO_SERVER = join(here, '..', '..', '..', 'tests', 'fixtures', 'mcp', 'echo_server.py');
const MCP_PROMPT = 'Say hello through the MCP echo server';
const MCP_TEXT = 'Hello from the echo server';
const MCP_ANSWER = `The echo server answered: ${MCP_TEXT}.`;
// The agent in the editor: src/greet.py, open with unsaved typing (a TODO line); its selection
// goes with the prompt (the chat's chip), and the run's edit_file changes the unsaved document in
// the editor (undoable there), not the file on disk. Then Explain from the editor's context menu.
const GREET = 'def greet(name):\n    return "Hello, " + name + "!"\n\n\ndef main():\n    print(greet("world"))\n';
const TODO = '# TODO: call main when run as a script';
const MAIN_GUARD = 'if __name__ == "__main__":\n    main()';
const EDITOR_PROMPT = 'Do this TODO';
const EDITOR_ANSWER = 'Done: main() now runs when greet.py is started as a script (in your editor, unsaved).';
const EXPLAIN_PROMPT = 'Explain the selected code.';
const EXPLAIN_ANSWER = 'greet() builds the greeting for one name: "Hello, " before it and "!" after it.';
// Sessions at once and worktree sessions, in a third folder (a git repository): the chat runs
// session A, switches to a new session B and streams it while A goes on in the background (both
// marked running), then back to A (its transcript as it is now, then live); a terminal run
// (`pseudoclaude run --session A`) writes session A: a prompt for A meanwhile is refused (busy)
// and waits for it; then a session in a worktree of its own.
const BG_PROMPT = 'Check the tokenizer for edge cases';
const BG_CHUNKS = [
  'Checking the tokenizer for edge cases:\n\n', '- **Empty source**: ', 'no tokens, no error.\n', '- **Only spaces**: ',
  'no tokens either.\n', '- **Tabs and newlines**: ', 'split like spaces.\n', '- **Unicode names**: ', 'kept whole.\n',
  '- **A very long line**: ', 'split in one pass.\n\n', 'No edge case breaks it; ', 'two of them deserve a test.',
];
const BG_ANSWER = 'two of them deserve a test.';
const SIDE_PROMPT = 'Review the tokenizer in the background';
const SIDE_ANSWER = 'The tokenizer review is done: no issue found.';
const STREAM_PROMPT = 'Sketch a plan for the parser tests';
const STREAM_CHUNKS = [
  'A plan for the parser tests:\n\n', '1. **Empty input**: ', 'the parser returns an empty tree.\n',
  '2. **One statement**: ', 'a single node with its span.\n', '3. **Nested blocks**: ', 'depth and order are kept.\n',
  '4. **Errors**: ', 'a bad token is reported with its line.\n', '5. **Round trip**: ', 'printing the tree gives the source back.\n\n',
  'Then one test per bug fixed, ', 'named after the bug.',
];
const FIRST_WT_PROMPT = 'Where is the tokenizer?';
const FIRST_WT_ANSWER = 'In src/tokenizer.py: it splits the source into tokens for the parser.';
const BUSY_PROMPT = 'Add a test for empty input';
const BUSY_ANSWER = 'Added tests/test_empty.py: the parser returns an empty tree for empty input.';
const WORKTREE_PROMPT = 'Write down the release steps and link them from the README';
const WORKTREE_ANSWER = 'I wrote RELEASING.md and linked it from the README (in the worktree).';
const RELEASING = '# Releasing\n\n1. Update CHANGES.md.\n2. Tag the release: git tag vX.Y.Z.\n3. Push the tag.\n';
const README_WT = [
  '# Parser', '', 'A tiny parser for a small language: statements, blocks and comments.', '',
  '## Install', '', '    pip install .', '', '## Use', '', '    python -m parser FILE', '',
  '## Contributing', '', 'Open a pull request with a test.', '',
].join('\n');
const README_WT_LINE = 'Open a pull request with a test.';
const README_WT_EDIT = 'Open a pull request with a test.\n\nSee RELEASING.md for how to cut a release.';
// Plan mode with a task list, in a new session: the model keeps a task list (update_tasks) and
// presents a plan (exit_plan_mode); Keep planning with feedback, then the plan again, approved
// with edits accepted; the model works through the list (writing files without asking), its
// checklist above the prompt box following it.
const PLAN_TASKS_PROMPT = 'Let greet.py greet anyone by name';
// Sub-agents: the model hands a search to an explore sub-agent; its calls show in its card.
const SUBAGENT_PROMPT = 'Ask a helper where the greeting is printed';
const SUBAGENT_TASK = 'SUBAGENT-TASK: find where greet.py prints the greeting and say which function does it.';
const SUBAGENT_DESCRIPTION = 'Find where the greeting is printed';
const EXPLORE_SYSTEM = 'You are an explore sub-agent';
const SUBAGENT_ANSWER = 'The parent read it: main() in src/greet.py prints the greeting.';
const PLAN_TITLE = 'Add a --name option to greet.py';
const PLAN_STEPS = [
  '1. **Parse the option** in a new `src/cli.py` (argparse: `--name`, default `world`).',
  '2. **Call `greet()`** with the name from `main()`.',
];
const PLAN_CHECK = '**Check it**: `python src/cli.py --name Ada` prints `Hello, Ada!`.';
const PLAN_FIRST = [`## ${PLAN_TITLE}`, '', 'The greeting is fixed to *world* today. The plan:', '', ...PLAN_STEPS, `3. ${PLAN_CHECK}`].join('\n');
const PLAN_FEEDBACK = 'Also document the option in docs/usage.md';
const PLAN_SECOND = [
  `## ${PLAN_TITLE}`, '', 'The greeting is fixed to *world* today. The plan:', '', ...PLAN_STEPS,
  '3. **Document it** in `docs/usage.md`: the command line and what it prints.', `4. ${PLAN_CHECK}`, '',
  '`greet()` itself does not change.',
].join('\n');
const TASK_NAMES = ['Parse --name in src/cli.py', 'Call greet() with the name', 'Document it in docs/usage.md', 'Check it with --name Ada'];
/** The task list with the first `done` completed and the next one in progress (`done` < 0: all pending). */
const taskList = (done, names = TASK_NAMES) =>
  names.map((content, i) => ({ content, status: done < 0 ? 'pending' : i < done ? 'completed' : i === done ? 'in_progress' : 'pending' }));
const CLI = [
  'import argparse', '', 'from greet import greet', '', '', 'def main():',
  '    parser = argparse.ArgumentParser(description="Greet someone.")',
  '    parser.add_argument("--name", default="world", help="who to greet (default: world)")',
  '    print(greet(parser.parse_args().name))', '', '', 'if __name__ == "__main__":', '    main()', '',
].join('\n');
const USAGE = '# Usage\n\n    python src/cli.py --name NAME\n\nPrints the greeting for NAME (default: world).\n';
const PLAN_WRITING = 'Writing the usage page';
const PLAN_DONE = 'Done: `python src/cli.py --name Ada` prints Hello, Ada!, and docs/usage.md explains the option.';
const codeServer = join(here, 'node_modules', '.bin', 'code-server');
mkdirSync(opts.out, { recursive: true });

const t0 = Date.now();
const log = (msg) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);
const cleanups = [];
let currentPage;

async function freePort() {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address();
  srv.close();
  await once(srv, 'close');
  return port;
}

/**
 * The fake model (`pseudoclaude fake-model`) with its demo script (read README.md, then answer)
 * plus two rules: "please run the tests" calls run_command, which needs an approval, and "a slow
 * question" stalls mid-answer, for Cancel Run.
 * Its base URL is the first stdout line.
 */
async function startFakeModel(tmp) {
  const demo = spawnSync(
    opts.python,
    ['-c', 'import json; from pseudoclaude.fake_model import DEMO_SCRIPT; print(json.dumps(DEMO_SCRIPT))'],
    { encoding: 'utf8' },
  );
  if (demo.status !== 0) {
    throw new Error(`cannot read the demo script: ${demo.stderr}`);
  }
  const script = JSON.parse(demo.stdout);
  script.rules.unshift(
    // Sub-agents: the explore sub-agent searches, reads, then answers slowly (its card's
    // screenshot is taken while it still runs); the parent then answers.
    {
      when: { system_contains: EXPLORE_SYSTEM, last_is_tool_result: false, body_contains: 'SUBAGENT-TASK' },
      reply: { text: 'Searching for the print call.', tool_calls: [{ name: 'search_code', arguments: { pattern: 'print(' } }] },
      times: 1,
    },
    {
      when: { system_contains: EXPLORE_SYSTEM, last_is_tool_result: true, body_contains: 'SUBAGENT-TASK' },
      reply: { text: 'Reading the file.', tool_calls: [{ name: 'find_files', arguments: { pattern: '**/*.py' } }, { name: 'read_file', arguments: { path: 'src/greet.py' } }] },
      times: 1,
    },
    {
      when: { system_contains: EXPLORE_SYSTEM, last_is_tool_result: true, body_contains: 'SUBAGENT-TASK' },
      reply: { text: ['Found it: ', '`main()` in src/greet.py', ' calls print() with the greeting.'], stall: 14, stall_after: 5 },
      times: 1,
    },
    {
      when: { has_tools: true, last_is_tool_result: true, body_contains: 'SUBAGENT-TASK' },
      reply: { text: SUBAGENT_ANSWER },
      times: 1,
    },
    {
      when: { has_tools: true, last_user_contains: SUBAGENT_PROMPT },
      reply: {
        text: 'I will ask an explore sub-agent.',
        tool_calls: [{ name: 'agent', arguments: { prompt: SUBAGENT_TASK, description: SUBAGENT_DESCRIPTION, subagent_type: 'explore', name: 'finder' } }],
      },
      times: 1,
    },
    // Plan mode and the task list (each step once, the latest first: a request's body keeps
    // what every earlier step added to it).
    {
      when: { has_tools: true, last_is_tool_result: true, body_contains: '(4 of 4 completed)' },
      reply: { text: PLAN_DONE },
      times: 1,
    },
    {
      when: { has_tools: true, last_is_tool_result: true, body_contains: 'Prints the greeting for NAME' },
      reply: { text: 'Documented. Checking it.', tool_calls: [{ name: 'update_tasks', arguments: { tasks: taskList(4) } }] },
      times: 1,
    },
    {
      // Streams a little, then goes silent for a while (the checklist's screenshot), then writes.
      when: { has_tools: true, last_is_tool_result: true, body_contains: '(2 of 4 completed)' },
      reply: {
        text: [`${PLAN_WRITING}:`, ' the command line', ' and what it prints.'],
        stall: 20,
        stall_after: 4,
        tool_calls: [{ name: 'write_file', arguments: { path: 'docs/usage.md', content: USAGE } }],
      },
      times: 1,
    },
    {
      when: { has_tools: true, last_is_tool_result: true, body_contains: 'argparse.ArgumentParser' },
      reply: { text: 'main() passes the name on. Now the docs.', tool_calls: [{ name: 'update_tasks', arguments: { tasks: taskList(2) } }] },
      times: 1,
    },
    {
      when: { has_tools: true, last_is_tool_result: true, body_contains: 'The user approved the plan' },
      reply: {
        text: 'Starting with the option.',
        tool_calls: [
          { name: 'update_tasks', arguments: { tasks: taskList(0) } },
          { name: 'write_file', arguments: { path: 'src/cli.py', content: CLI } },
        ],
      },
      times: 1,
    },
    {
      when: { has_tools: true, last_is_tool_result: true, body_contains: PLAN_FEEDBACK },
      reply: {
        text: 'Good point: the plan documents the option too.',
        tool_calls: [
          { name: 'update_tasks', arguments: { tasks: taskList(-1) } },
          { name: 'exit_plan_mode', arguments: { plan: PLAN_SECOND } },
        ],
      },
      times: 1,
    },
    {
      when: { has_tools: true, last_user_contains: PLAN_TASKS_PROMPT },
      reply: {
        text: 'I read greet.py; here is my plan.',
        tool_calls: [
          { name: 'update_tasks', arguments: { tasks: taskList(-1, [TASK_NAMES[0], TASK_NAMES[1], TASK_NAMES[3]]) } },
          { name: 'exit_plan_mode', arguments: { plan: PLAN_FIRST } },
        ],
      },
      times: 1,
    },
    {
      // Sessions at once: the terminal's run of session A goes silent for a while, then ends.
      when: { has_tools: true, last_user_contains: SIDE_PROMPT },
      reply: { text: ['Reviewing the tokenizer', '…', ` ${SIDE_ANSWER}`], stall: 32, stall_after: 4 },
    },
    {
      // The chat's run of session A, going on in the background while the chat shows session B.
      when: { has_tools: true, last_user_contains: BG_PROMPT },
      reply: { text: BG_CHUNKS, delay: 1.6 },
    },
    {
      // The chat's run of session B meanwhile: a Markdown answer that streams for a few seconds.
      when: { has_tools: true, last_user_contains: STREAM_PROMPT },
      reply: { text: STREAM_CHUNKS, delay: 0.6 },
    },
    { when: { has_tools: true, last_user_contains: BUSY_PROMPT }, reply: { text: BUSY_ANSWER } },
    { when: { has_tools: true, last_user_contains: FIRST_WT_PROMPT }, reply: { text: FIRST_WT_ANSWER } },
    {
      // The worktree session's run: a new file and an edit (each approved in the chat), then the answer (once).
      when: { has_tools: true, last_is_tool_result: true, body_contains: WORKTREE_PROMPT },
      reply: { text: WORKTREE_ANSWER },
      times: 1,
    },
    {
      when: { has_tools: true, last_user_contains: WORKTREE_PROMPT },
      reply: {
        text: 'Writing the release steps.',
        tool_calls: [
          { name: 'write_file', arguments: { path: 'RELEASING.md', content: RELEASING } },
          { name: 'read_file', arguments: { path: 'README.md' } },
          { name: 'edit_file', arguments: { path: 'README.md', old_text: README_WT_LINE, new_text: README_WT_EDIT } },
        ],
      },
    },
    {
      // The editor scenario: the selection (the unsaved TODO line) comes with the prompt in the
      // editor context block; edit_file replaces that unsaved line (approved in the chat).
      when: { has_tools: true, last_is_tool_result: true, body_contains: EDITOR_PROMPT },
      reply: { text: EDITOR_ANSWER },
      times: 1,
    },
    {
      when: { has_tools: true, last_user_contains: EDITOR_PROMPT, body_contains: TODO },
      reply: {
        text: 'Replacing the TODO with a main guard.',
        // (read first: an edit of a file the session has not read is refused)
        tool_calls: [
          { name: 'read_file', arguments: { path: 'src/greet.py' } },
          { name: 'edit_file', arguments: { path: 'src/greet.py', old_text: TODO, new_text: MAIN_GUARD } },
        ],
      },
    },
    {
      // Explain (the editor's context menu): the selected function comes with the prompt.
      when: { has_tools: true, last_user_contains: EXPLAIN_PROMPT, body_contains: 'def greet(name):' },
      reply: { text: EXPLAIN_ANSWER },
    },
    {
      // The MCP scenario: mcp__echo__echo (approved in the chat), then the answer (once).
      when: { has_tools: true, last_is_tool_result: true, body_contains: MCP_PROMPT },
      reply: { text: MCP_ANSWER },
      times: 1,
    },
    {
      when: { has_tools: true, last_user_contains: MCP_PROMPT, body_contains: 'mcp__echo__echo' },
      reply: { text: 'Asking the echo server.', tool_calls: [{ name: 'mcp__echo__echo', arguments: { text: MCP_TEXT } }] },
    },
    {
      // The rewind scenario's run: two writes (each approved in the chat), then a short answer (once).
      when: { has_tools: true, last_is_tool_result: true, body_contains: REWIND_PROMPT },
      reply: { text: REWIND_ANSWER },
      times: 1,
    },
    {
      when: { has_tools: true, last_user_contains: REWIND_PROMPT },
      reply: {
        text: 'Writing the changelog.',
        tool_calls: [
          { name: 'write_file', arguments: { path: 'CHANGES.md', content: CHANGES } },
          { name: 'read_file', arguments: { path: 'README.md' } },
          { name: 'edit_file', arguments: { path: 'README.md', old_text: README_LINE, new_text: README_EDITED } },
        ],
      },
    },
    { when: { has_tools: true, last_user_contains: REWIND_FIRST }, reply: { text: REWIND_FIRST_ANSWER } },
    ...[
      [MISSING_PROMPT, { text: 'Let me look.', tool_calls: [{ name: 'read_file', arguments: { path: 'notes/todo.md' } }] }, MISSING_ANSWER],
      [DENY_PROMPT, { text: 'Removing it.', tool_calls: [{ name: 'run_command', arguments: { command: 'rm -rf build' } }] }, DENIED_ANSWER],
      [PLAN_PROMPT, { text: 'Building it.', tool_calls: [{ name: 'run_command', arguments: { command: 'make build' } }] }, PLAN_ANSWER],
      [ALWAYS_PROMPT, { text: 'Running them.', tool_calls: [{ name: 'run_command', arguments: { command: 'make test' } }] }, ALWAYS_ANSWER],
      [ALWAYS_AGAIN, { text: 'Running them again.', tool_calls: [{ name: 'run_command', arguments: { command: 'make test' } }] }, ALWAYS_AGAIN_ANSWER],
      [BIG_PROMPT, { text: 'Reading it.', tool_calls: [{ name: 'read_file', arguments: { path: 'bench.log' } }] }, BIG_ANSWER],
      // The demo's fixed usage would anchor the estimate far below what two reads cost.
      [BIG_AGAIN, { text: 'Reading it again.', tool_calls: [{ name: 'read_file', arguments: { path: 'bench.log' } }] }, BIG_AGAIN_ANSWER,
        { input: 24000, output: 60 }],
    ].flatMap(([prompt, call, answer, usage]) => [
      { when: { has_tools: true, last_is_tool_result: true, body_contains: prompt }, reply: { text: answer, ...(usage ? { usage } : {}) }, times: 1 },
      { when: { has_tools: true, last_user_contains: prompt }, reply: call },
    ]),
    {
      // The memory update after MEMORY_PROMPT's run (no tools; its transcript has the prompt):
      // one create operation, which memory.mode: confirm turns into a proposal (once).
      when: { has_tools: false, system_contains: 'long-term memory', body_contains: MEMORY_PROMPT },
      reply: { text: JSON.stringify([NOTE]) },
      times: 1,
    },
    {
      when: { has_tools: true, last_user_contains: MEMORY_PROMPT },
      reply: { text: MEMORY_ANSWER },
    },
    {
      // A write approval: edit_file on README.md (a diff), then a short answer (once).
      when: { has_tools: true, last_is_tool_result: true, body_contains: EDIT_PROMPT },
      reply: { text: EDITED },
      times: 1,
    },
    {
      when: { has_tools: true, last_user_contains: EDIT_PROMPT },
      reply: {
        text: 'Updating the title.',
        tool_calls: [{ name: 'edit_file', arguments: { path: 'README.md', old_text: '# Demo project', new_text: NEW_TITLE } }],
      },
    },
    {
      // After the approved command: a short answer (once).
      when: { has_tools: true, last_is_tool_result: true, body_contains: APPROVAL_PROMPT },
      reply: { text: TESTS_PASSED },
      times: 1,
    },
    {
      // The chat's first question: read the README, then a Markdown answer streamed in pieces.
      when: { has_tools: true, last_user_contains: CHAT_PROMPT },
      reply: { text: 'Let me read the README first.', tool_calls: [{ name: 'read_file', arguments: { path: 'README.md' } }] },
    },
    {
      when: { has_tools: true, last_is_tool_result: true, body_contains: CHAT_PROMPT },
      reply: { text: CHAT_ANSWER, usage: { input: 1200, output: 90 } },
      times: 1,
    },
    {
      when: { has_tools: true, last_user_contains: APPROVAL_PROMPT },
      reply: { text: 'Running them.', tool_calls: [{ name: 'run_command', arguments: { command: 'true' } }] },
    },
    {
      // Streams two pieces, then goes silent: a run to cancel.
      when: { has_tools: true, last_user_contains: SLOW_PROMPT },
      reply: { text: ['Thinking slowly', ' and', ' never finishing.'], stall: 120, stall_after: 4 },
    },
  );
  const scriptFile = join(tmp, 'fake-model.json');
  writeFileSync(scriptFile, JSON.stringify(script));
  const proc = spawn(opts.python, ['-m', 'pseudoclaude', 'fake-model', '--port', '0', '--script', scriptFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  cleanups.push(() => proc.kill('SIGTERM'));
  const lines = createInterface({ input: proc.stdout });
  const [url] = await Promise.race([
    once(lines, 'line'),
    once(proc, 'exit').then(([code]) => {
      throw new Error(`fake-model exited with ${code}`);
    }),
  ]);
  return url.trim();
}

function installExtension(dirs) {
  const r = spawnSync(
    codeServer,
    ['--install-extension', opts.vsix, '--extensions-dir', dirs.extensions, '--user-data-dir', dirs.userData,
      '--config', dirs.config],
    { encoding: 'utf8', timeout: TIMEOUT },
  );
  log(`install: ${(r.stdout + r.stderr).trim().split('\n').slice(-2).join(' | ')}`);
  if (r.status !== 0 || !/successfully installed/i.test(r.stdout + r.stderr)) {
    throw new Error(`--install-extension failed (${r.status}): ${r.stdout}${r.stderr}`);
  }
}

/** code-server in its own process group (detached), ended as a group at exit. */
async function startCodeServer(dirs, port, folder, path) {
  const logFile = join(opts.out, 'code-server.log');
  const proc = spawn(
    codeServer,
    ['--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check',
      '--disable-workspace-trust', '--disable-getting-started-override', '--extensions-dir', dirs.extensions,
      '--user-data-dir', dirs.userData, '--config', dirs.config, folder],
    { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PATH: path } },
  );
  const chunks = [];
  proc.stdout.on('data', (d) => chunks.push(d));
  proc.stderr.on('data', (d) => chunks.push(d));
  cleanups.push(() => {
    try {
      process.kill(-proc.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    writeFileSync(logFile, Buffer.concat(chunks));
  });
  const deadline = Date.now() + TIMEOUT;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) {
      throw new Error(`code-server exited (${proc.exitCode}): ${Buffer.concat(chunks).toString()}`);
    }
    try {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (r.ok) {
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('code-server did not answer /healthz');
}

/** Run a command from the palette; retried until the extension's contributions are loaded. */
async function runCommand(page, title) {
  const input = page.locator('.quick-input-widget input');
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    await page.keyboard.press('F1');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${title}`);
    try {
      await row.waitFor({ state: 'visible', timeout: 3000 });
      break;
    } catch (e) {
      if (Date.now() > deadline) {
        throw e;
      }
      await page.keyboard.press('Escape');
    }
  }
  await input.press('Enter');
}

/** The extension's "PseudoClaude Server" log channel, as the extension host wrote it. */
function findServerLog(userData) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(path);
      } else if (entry.name === 'PseudoClaude Server.log') {
        found.push(path);
      }
    }
  };
  walk(join(userData, 'logs'));
  if (found.length === 0) {
    throw new Error('no "PseudoClaude Server" log: did the extension activate?');
  }
  return found.map((f) => readFileSync(f, 'utf8')).join('\n');
}

/** The PATH without any folder that has a `pseudoclaude` executable (the server must come from the setting). */
function pathWithoutPseudoclaude() {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((d) => d && !existsSync(join(d, 'pseudoclaude')));
  const path = dirs.join(delimiter);
  const probe = spawnSync('sh', ['-c', 'command -v pseudoclaude'], { env: { ...process.env, PATH: path }, encoding: 'utf8' });
  if (probe.status === 0) {
    throw new Error(`pseudoclaude is still on the PATH: ${probe.stdout.trim()}`);
  }
  return path;
}

/** The files under `dir` (relative paths, sorted), without the sessions' logs. */
function workspaceFiles(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name).slice(dir.length + 1))
    .filter((f) => !f.startsWith(join('.PseudoClaude', 'sessions')))
    .sort();
}

/** The chat webview's document: a frame (nested in code-server) that has the prompt box. */
async function chatFrame(page) {
  const deadline = Date.now() + TIMEOUT;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      try {
        if (await frame.locator('#prompt').count()) {
          return frame;
        }
      } catch {
        // a frame that went away meanwhile
      }
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('no chat webview frame with #prompt');
}

async function ask(frame, prompt) {
  const box = frame.locator('#prompt');
  await box.click();
  await box.fill(prompt);
  await box.press('Enter');
}

/** Wait until the chat is idle again (no Stop button). */
async function chatIdle(frame) {
  await frame.locator('#cancel').waitFor({ state: 'hidden' });
  await frame.locator('#send:not([disabled])').waitFor({ state: 'visible' });
}

async function shot(page, name, paths) {
  const file = join(opts.out, name);
  await page.screenshot({ path: file });
  paths.push(file);
  if (opts.media) {
    mkdirSync(opts.media, { recursive: true });
    copyFileSync(file, join(opts.media, name));
  }
  log(`screenshot: ${file}`);
}

async function main() {
  const tmp = mkdtempSync(join(tmpdir(), 'pseudoclaude-vscode-'));
  cleanups.push(() => (opts.keep ? log(`kept ${tmp}`) : rmSync(tmp, { recursive: true, force: true })));
  const folder = join(tmp, 'project');
  mkdirSync(folder);
  writeFileSync(join(folder, 'README.md'), '# Demo project\n\nIt keeps sessions and memory.\n');
  writeFileSync(join(folder, 'bench.log'), BIG_LOG);
  writeFileSync(join(folder, 'Makefile'), 'test:\n\t@echo "4 tests passed"\n');
  mkdirSync(join(folder, 'src'));
  writeFileSync(join(folder, 'src', 'greet.py'), GREET);
  const dirs = {
    extensions: join(tmp, 'extensions'),
    userData: join(tmp, 'user-data'),
    config: join(tmp, 'config.yaml'),
  };
  writeFileSync(dirs.config, 'auth: none\ncert: false\n');
  const baseUrl = await startFakeModel(tmp);
  log(`fake model at ${baseUrl}`);
  mkdirSync(join(dirs.userData, 'User'), { recursive: true });
  writeFileSync(
    join(dirs.userData, 'User', 'settings.json'),
    JSON.stringify(
      {
        'pseudoclaude.provider': 'anthropic',
        'pseudoclaude.apiKey': 'sk-test',
        'pseudoclaude.baseUrl': baseUrl,
        'pseudoclaude.approvals.runCommand': 'ask',
        'pseudoclaude.approvals.write': 'ask',
        // Commands are asked about although a sandbox works here (bubblewrap): the approvals
        // below are what is tested.
        'pseudoclaude.sandbox.autoAllow': false,
        // Memory updates wait for review; the user level in the test's folder, not ~/.PseudoClaude.
        'pseudoclaude.memory.mode': 'confirm',
        'pseudoclaude.memory.userDir': join(tmp, 'user-memory'),
        // As in desktop VS Code (in a browser it saves after a delay): typing leaves a file unsaved.
        'files.autoSave': 'off',
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'security.workspace.trust.enabled': false,
        'extensions.autoCheckUpdates': false,
        'telemetry.telemetryLevel': 'off',
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        'chat.disableAIFeatures': true,
        'window.commandCenter': false,
        ...(opts.theme ? { 'workbench.colorTheme': opts.theme } : {}),
      },
      null,
      2,
    ),
  );
  // code-server windows are remote windows: `machine`-scoped settings come from Machine settings.
  const serverCommand = [opts.python, '-m', 'pseudoclaude', 'lsp'];
  mkdirSync(join(dirs.userData, 'Machine'), { recursive: true });
  writeFileSync(
    join(dirs.userData, 'Machine', 'settings.json'),
    JSON.stringify({ 'pseudoclaude.server.command': serverCommand }, null, 2),
  );
  const path = pathWithoutPseudoclaude();
  installExtension(dirs);
  const port = await freePort();
  await startCodeServer(dirs, port, folder, path);
  log(`code-server on port ${port} (PATH without pseudoclaude)`);

  const browser = await chromium.launch({
    executablePath: opts.chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  cleanups.push(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(TIMEOUT);
  currentPage = page;
  const shots = [];
  /** Wait until the panel (the PseudoClaude output channel) shows `text`. */
  const panelHas = (text) =>
    page.waitForFunction(
      (t) => (document.querySelector('.part.panel')?.textContent ?? '').replace(/\u00a0/g, ' ').includes(t),
      text,
      { timeout: TIMEOUT },
    );
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(folder)}`);
  await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible' });
  log('workbench loaded');

  // The PseudoClaude view container is in the activity bar before any command ran.
  const icon = page.locator('.part.activitybar .action-item [aria-label^="PseudoClaude"]').first();
  await icon.waitFor({ state: 'visible' });
  await icon.click();
  await page.locator('.part.sidebar .pane-header', { hasText: 'Chat' }).first().waitFor({ state: 'visible' });
  log('PseudoClaude view opened from the activity bar');
  // A wider side bar for the screenshots: drag the sash at its right edge.
  const bar = await page.locator('.part.sidebar').boundingBox();
  if (bar) {
    await page.mouse.move(bar.x + bar.width + 1, bar.y + bar.height / 2);
    await page.mouse.down();
    await page.mouse.move(bar.x + 560, bar.y + bar.height / 2, { steps: 8 });
    await page.mouse.up();
  }

  // The chat: a prompt typed into the webview, the streamed Markdown answer, a tool card.
  let chat = await chatFrame(page);
  await chat.locator('.welcome').waitFor({ state: 'visible' });
  await ask(chat, CHAT_PROMPT);
  await chat.locator('.msg.user', { hasText: CHAT_PROMPT }).waitFor({ state: 'visible' });
  await chat.locator('.msg.assistant h2', { hasText: CHAT_HEADING }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  const answer = chat.locator('.msg.assistant', { hasText: CHAT_HEADING });
  for (const selector of ['strong', 'em', 'li', '.code-block .copy', 'code']) {
    if ((await answer.locator(selector).count()) === 0) {
      throw new Error(`the answer has no ${selector}: ${await answer.innerHTML()}`);
    }
  }
  if ((await answer.innerText()).includes('**')) {
    throw new Error('raw Markdown in the answer');
  }
  const tool = chat.locator('details.tool', { hasText: 'read_file' }).first();
  await tool.locator('.tool-status', { hasText: 'done' }).waitFor({ state: 'visible' });
  log('chat: streamed Markdown answer and a read_file card');
  await chat.locator('.meter-bar .seg-system').first().waitFor({ state: 'attached' });
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-chat-answer.png', shots);
  await tool.locator('summary').click();
  await tool.locator('.card-pre', { hasText: 'Demo project' }).waitFor({ state: 'visible' });
  await chat.locator('.meter .legend summary').click();
  await chat.locator('.meter table').waitFor({ state: 'visible' });
  await shot(page, 'vscode-chat-tool.png', shots);
  await chat.locator('.meter .legend summary').click();
  await tool.locator('summary').click();

  // Approvals in the chat (the extension asks for `pseudoclaude/approve`): a command, then a
  // write whose change opens in VS Code's diff editor until it is answered.
  await ask(chat, APPROVAL_PROMPT);
  const command = chat.locator('.card.approval.pending', { hasText: 'run_command' });
  await command.waitFor({ state: 'visible' });
  if ((await page.locator('.monaco-dialog-box').count()) > 0) {
    throw new Error('a modal approval dialog: the server did not use pseudoclaude/approve');
  }
  await command.locator('button[data-decision="allowOnce"]').click();
  await chat.locator('.approval-line.approval-allowOnce', { hasText: 'Allowed once' }).waitFor({ state: 'visible' });
  await chat.locator('details.tool', { hasText: 'run_command' }).locator('.tool-status', { hasText: 'done' })
    .waitFor({ state: 'visible' });
  await chat.locator('.msg.assistant', { hasText: TESTS_PASSED }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  log('chat: run_command approved in its card (Allow once) and ran');

  await ask(chat, EDIT_PROMPT);
  const write = chat.locator('.card.approval.pending', { hasText: 'README.md' });
  await write.waitFor({ state: 'visible' });
  const diffEditor = page.locator('.monaco-diff-editor').first();
  await diffEditor.waitFor({ state: 'visible' });
  const tab = page.locator('.tabs-container .tab', { hasText: 'README.md' }).first();
  await tab.waitFor({ state: 'visible' });
  await page.locator('.monaco-diff-editor .editor.modified', { hasText: 'sessions and memory' }).first()
    .waitFor({ state: 'visible' });
  if (readFileSync(join(folder, 'README.md'), 'utf8').includes(NEW_TITLE)) {
    throw new Error('README.md changed before the approval');
  }
  // The diff editor's title has the same answer (Allow This Change / Deny This Change).
  await page.locator('.editor-actions [aria-label^="PseudoClaude: Allow This Change"]').first()
    .waitFor({ state: 'visible' });
  await write.locator('button[data-decision="allowOnce"]').focus();
  await shot(page, 'vscode-chat-approval.png', shots);
  await write.locator('button[data-decision="allowOnce"]').click();
  await chat.locator('.msg.assistant', { hasText: EDITED }).waitFor({ state: 'visible' });
  await diffEditor.waitFor({ state: 'detached' });
  if (!readFileSync(join(folder, 'README.md'), 'utf8').includes(NEW_TITLE)) {
    throw new Error('README.md did not change after Allow once');
  }
  await chatIdle(chat);
  log('chat: edit_file shown in the diff editor, approved, written; the diff closed');

  await permissionModes(page, chat, folder, shots);
  await editorContext(page, chat, folder, shots);

  // Memory with consent (memory.mode: confirm): the update after a run proposes a note and
  // writes nothing; the Memory view lists the proposal, a click shows the whole note in the diff
  // editor (a short tab title, its own Accept / Reject title buttons, not the edit approvals'),
  // the right side is edited there and saved (which writes nothing), and Accept writes the note
  // as edited and empties the queue.
  const memoryDir = join(folder, '.PseudoClaude', 'memory');
  const proposalsDir = join(folder, '.PseudoClaude', 'proposals');
  const pendingFiles = () => (existsSync(proposalsDir) ? readdirSync(proposalsDir).filter((f) => f.endsWith('.json')) : []);
  await ask(chat, MEMORY_PROMPT);
  await chat.locator('.msg.assistant', { hasText: 'make check' }).waitFor({ state: 'visible' });
  await chat.locator('.event.memory-proposed', { hasText: NOTE_FILE }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  if (existsSync(join(memoryDir, NOTE_FILE))) {
    throw new Error(`${NOTE_FILE} was written before the proposal was accepted`);
  }
  if (pendingFiles().length !== 1) {
    throw new Error(`expected one proposal in ${proposalsDir}, found ${JSON.stringify(pendingFiles())}`);
  }
  const filesBefore = workspaceFiles(folder);
  const memoryHeader = page.locator('.part.sidebar .pane-header', { hasText: 'Memory' }).first();
  await memoryHeader.click();
  const memoryRows = page.locator('.part.sidebar .pane')
    .filter({ has: page.locator('.pane-header', { hasText: 'Memory' }) }).locator('.monaco-list-row');
  await memoryRows.filter({ hasText: 'Pending proposals' }).first().waitFor({ state: 'visible' });
  // The chat got shorter when the Memory view opened: it stays at its end (the proposal's line).
  await chat.waitForFunction(() => {
    const t = document.getElementById('transcript');
    return t !== null && t.scrollHeight - t.scrollTop - t.clientHeight < 2;
  }, undefined, { timeout: 10_000 }).catch(async () => {
    const m = await chat.locator('#transcript').evaluate((t) => [t.scrollTop, t.scrollHeight, t.clientHeight]);
    throw new Error(`the chat did not stay at its end when the Memory view opened (scrollTop, scrollHeight, clientHeight: ${m})`);
  });
  log('chat: still at its end after the Memory view opened below it');
  const proposalRow = memoryRows.filter({ hasText: NOTE.title }).filter({ hasText: 'create' }).first();
  await proposalRow.waitFor({ state: 'visible' });
  await proposalRow.click();
  const proposalDiff = page.locator('.monaco-diff-editor').first();
  await proposalDiff.waitFor({ state: 'visible' });
  const proposalTab = page.locator('.tabs-container .tab', { hasText: `${NOTE_FILE} (project memory: new note)` }).first();
  await proposalTab.waitFor({ state: 'visible' });
  const modified = page.locator('.monaco-diff-editor .editor.modified').first();
  await modified.filter({ hasText: 'Run the whole test suite with' }).waitFor({ state: 'visible' });
  const acceptButton = page.locator('.editor-actions [aria-label^="PseudoClaude: Accept Memory Proposal"]').first();
  await acceptButton.waitFor({ state: 'visible' });
  await page.locator('.editor-actions [aria-label^="PseudoClaude: Reject Memory Proposal"]').first().waitFor({ state: 'visible' });
  if ((await page.locator('.editor-actions [aria-label^="PseudoClaude: Allow This Change"]').count()) > 0) {
    throw new Error('the proposal diff shows the edit approval buttons (Allow This Change)');
  }
  const review = page.locator('.notifications-toasts .notification-toast', { hasText: `PseudoClaude proposes to create ${NOTE_FILE}` }).first();
  await review.waitFor({ state: 'visible' });
  // The right side is editable: a line typed at its end (through the page, as a user would).
  await modified.locator('.view-line', { hasText: 'Ask the user before skipping' }).first().click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(NOTE_EDIT);
  await modified.filter({ hasText: NOTE_EDIT }).waitFor({ state: 'visible' });
  // Saving keeps the text in the proposal: nothing in the workspace, no note yet.
  await page.keyboard.press('Control+S');
  const dirtyTab = page.locator('.tabs-container .tab.dirty', { hasText: NOTE_FILE });
  await dirtyTab.first().waitFor({ state: 'detached', timeout: 10_000 });
  await page.waitForTimeout(500);
  const filesAfterSave = workspaceFiles(folder);
  if (filesAfterSave.join('\n') !== filesBefore.join('\n') || existsSync(join(memoryDir, NOTE_FILE))) {
    throw new Error(`saving the proposal changed the workspace: ${JSON.stringify(filesAfterSave.filter((f) => !filesBefore.includes(f)))}`);
  }
  // The toast slides in (VS Code marks it notification-fade-in-done): not half-way in the picture.
  await page.locator('.notifications-toasts .notification-toast.notification-fade-in-done', { hasText: 'PseudoClaude proposes' })
    .first().waitFor({ state: 'visible', timeout: 5000 }).catch(() => log('the review toast is not up any more'));
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-memory-proposal.png', shots);
  await acceptButton.click();
  await proposalDiff.waitFor({ state: 'detached' });
  await page.locator('.notifications-toasts .notification-toast', { hasText: `Accepted: ${NOTE_FILE}` }).first()
    .waitFor({ state: 'visible' });
  const note = existsSync(join(memoryDir, NOTE_FILE)) ? readFileSync(join(memoryDir, NOTE_FILE), 'utf8') : '';
  if (!note.includes('Run the whole test suite with `make check`') || !note.includes(`title: "${NOTE.title}"`) || !note.includes(NOTE_EDIT)) {
    throw new Error(`${join(memoryDir, NOTE_FILE)} after Accept: ${JSON.stringify(note)}`);
  }
  if (!readFileSync(join(memoryDir, 'MEMORY.md'), 'utf8').includes(NOTE_FILE)) {
    throw new Error(`MEMORY.md has no line for ${NOTE_FILE} after Accept`);
  }
  if (pendingFiles().length !== 0) {
    throw new Error(`proposals left after Accept: ${JSON.stringify(pendingFiles())}`);
  }
  await memoryRows.filter({ hasText: 'Pending proposals' }).first().waitFor({ state: 'detached' });
  await memoryRows.filter({ hasText: NOTE.title }).filter({ hasText: NOTE.type }).first().waitFor({ state: 'visible' });
  await memoryHeader.click();
  await runCommand(page, 'Notifications: Clear All Notifications');
  log(`memory: the proposal reviewed as a diff from the Memory view, its right side edited and saved (nothing written), accepted with the title button: ${NOTE_FILE} has the edit`);

  // Ask from the command palette: the output channel as before, and the chat shows that run too.
  await runCommand(page, 'PseudoClaude: Ask');
  const box = page.locator('.quick-input-widget input');
  await page.locator('.quick-input-widget', { hasText: 'PseudoClaude: Ask' }).waitFor({ state: 'visible' });
  await box.fill(PROMPT);
  await box.press('Enter');
  await panelHas(ANSWER);
  await panelHas('── completed · 2 iterations');
  await chat.locator('.msg.assistant', { hasText: ANSWER }).waitFor({ state: 'visible' });
  log('Ask: the answer in the output channel and in the chat');

  // The status bar meter: `<tokens>/200k`; its tooltip has the threshold.
  const meter = await page.waitForFunction(
    () => {
      const items = [...document.querySelectorAll('.part.statusbar .statusbar-item')];
      const hit = items.map((i) => (i.textContent ?? '').trim()).find((t) => /^\d+(\.\d)?k?\/200k$/.test(t));
      return hit ?? false;
    },
    undefined,
    { timeout: TIMEOUT },
  );
  const meterText = await meter.jsonValue();
  log(`status bar meter: ${meterText}`);
  const meterItem = page.locator('.part.statusbar .statusbar-item', { hasText: /\/200k$/ }).first();
  await meterItem.hover();
  await page.locator('.monaco-hover, .workbench-hover', { hasText: 'Auto-compact at 167,000' }).first()
    .waitFor({ state: 'visible' });
  await page.mouse.move(5, 5);
  log('meter tooltip shows the threshold');

  // Stop: a run that stalls mid-answer ends as cancelled.
  await ask(chat, SLOW_PROMPT);
  await chat.locator('.msg.assistant', { hasText: 'Thinking slowly' }).waitFor({ state: 'visible' });
  await chat.locator('#cancel').click();
  await chat.locator('.end', { hasText: 'Cancelled' }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  log('chat: Stop cancelled the run');

  // A failed call and a denied one, then a large read (the earlier runs leave the recent window).
  await ask(chat, MISSING_PROMPT);
  await chat.locator('details.tool.tool-failed', { hasText: 'read_file' }).waitFor({ state: 'visible' });
  await chat.locator('.msg.assistant', { hasText: MISSING_ANSWER }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  await ask(chat, DENY_PROMPT);
  const denied = chat.locator('.card.approval.pending', { hasText: 'rm -rf build' });
  await denied.waitFor({ state: 'visible' });
  // rm gets the exact command as its rule, never a prefix.
  await denied.locator('button[data-decision="allowAlways"]', { hasText: 'Bash(rm -rf build)' }).waitFor({ state: 'visible' });
  await denied.locator('input.deny-message').fill(DENY_MESSAGE);
  await denied.locator('button[data-decision="deny"]').click();
  await chat.locator('.approval-line.approval-deny', { hasText: `told the agent: “${DENY_MESSAGE}”` }).waitFor({ state: 'visible' });
  // The model reads the denial with the message in it.
  await chat.locator('details.tool.tool-denied', { hasText: 'run_command' }).filter({ hasText: DENY_MESSAGE }).waitFor({ state: 'attached' });
  await chat.locator('.msg.assistant', { hasText: DENIED_ANSWER }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  for (const [prompt, answer] of [[BIG_PROMPT, BIG_ANSWER], [BIG_AGAIN, BIG_AGAIN_ANSWER]]) {
    await ask(chat, prompt);
    await chat.locator('.msg.assistant', { hasText: answer }).waitFor({ state: 'visible' });
    await chatIdle(chat);
  }
  log('chat: a failed read_file, a denied run_command (with what to tell the agent), a large read');

  // A reload restores the transcript from the server's log.
  await page.reload();
  await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible' });
  chat = await chatFrame(page);
  await chat.locator('.msg.user', { hasText: CHAT_PROMPT }).waitFor({ state: 'visible' });
  await chat.locator('.msg.assistant h2', { hasText: CHAT_HEADING }).waitFor({ state: 'visible' });
  await chat.locator('details.tool', { hasText: 'run_command' }).first().waitFor({ state: 'visible' });
  log('chat: transcript restored after a reload');

  // The Sessions view lists the session, marked active.
  await page.locator('.part.sidebar .pane-header', { hasText: 'Sessions' }).first().click();
  await page.locator('.part.sidebar .monaco-list-row', { hasText: CHAT_PROMPT }).filter({ hasText: 'active' }).first()
    .waitFor({ state: 'visible' });
  await page.locator('.part.sidebar .pane-header', { hasText: 'Sessions' }).first().click();
  log('Sessions view: the session, marked active');

  // Compact: the preview first, then the compaction with its fact check.
  // (a short session fits the recent window: then the preview only says why there is nothing to do)
  await chat.locator('#compact').click();
  const preview = chat.locator('.card.preview');
  const nothing = chat.locator('.notice', { hasText: 'Nothing would be summarized' });
  await preview.or(nothing).first().waitFor({ state: 'visible' });
  if (await preview.count()) {
    await preview.locator('button', { hasText: 'Compact' }).click();
    await preview.locator('.preview-result').waitFor({ state: 'visible' });
    log(`chat: ${(await preview.locator('.preview-result').innerText()).trim()}`);
  } else {
    throw new Error(`compact preview: ${(await nothing.innerText()).trim()} (the large read should leave the earlier runs out of the recent window)`);
  }

  // After a reload the summarized part is still shown, dimmed and marked "not in context", with
  // each call's status (failed, denied, done) and the summary.
  await page.reload();
  await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible' });
  chat = await chatFrame(page);
  await chat.locator('.msg.assistant', { hasText: BIG_AGAIN_ANSWER }).waitFor({ state: 'visible' });
  // The workbench may restore the editors of an earlier saved layout (the memory proposal's
  // diff, gone since): not part of this picture.
  await runCommand(page, 'View: Close All Editors');
  const outOfContext = chat.locator('.out-of-context');
  await outOfContext.first().waitFor({ state: 'attached' });
  for (const status of ['failed', 'denied']) {
    await chat.locator(`details.tool.tool-${status}.out-of-context`).first().waitFor({ state: 'attached' });
  }
  await chat.locator('.out-badge', { hasText: 'not in context' }).first().waitFor({ state: 'attached' });
  await chat.locator('.event.marker-compaction').first().waitFor({ state: 'attached' });
  if ((await chat.locator('.marker.out-of-context, .notice.out-of-context').count()) > 0) {
    throw new Error('a compaction or undo marker is dimmed: only messages and tool cards are');
  }
  // The failed card open; the end of the dimmed part in the middle of the view.
  const failedCard = chat.locator('details.tool.tool-failed').first();
  await failedCard.locator('summary').click();
  await outOfContext.last().evaluate((e) => e.scrollIntoView({ block: 'center' }));
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-chat-resumed.png', shots);
  await failedCard.locator('summary').click();
  log(`chat: after a reload, ${await outOfContext.count()} items dimmed as not in context`);

  // Slash commands: typing / in the prompt lists the server's commands.
  const promptBox = chat.locator('#prompt');
  await promptBox.click();
  await promptBox.pressSequentially('/');
  const slash = chat.locator('#slash');
  await slash.locator('.slash-item', { hasText: '/compact' }).waitFor({ state: 'visible' });
  for (const name of ['/undo', '/context', '/memory', '/rewind', '/new']) {
    await slash.locator('.slash-item', { hasText: name }).first().waitFor({ state: 'visible' });
  }
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-chat-slash.png', shots);
  await promptBox.press('Escape');
  await promptBox.fill('');
  log('chat: / lists the slash commands');

  // Rewind and fork (a new session): a prompt whose run creates CHANGES.md and edits README.md;
  // its "Fork from here" starts a new session with the conversation before it (the prompt in the
  // box, the original still listed); back in the original, its "Rewind to here…" (Code and
  // conversation) lists the files (README.md's diff: now and after the rewind), Rewind puts them
  // back on disk and takes the conversation back (the prompt dimmed, back in the box).
  // The editor gets the room the Output panel took (the preview's diffs show there).
  if (await page.locator('.part.panel').isVisible()) {
    await runCommand(page, 'View: Hide Panel');
    await page.locator('.part.panel').waitFor({ state: 'hidden' });
  }
  await chat.locator('#new').click();
  await chat.locator('.welcome').waitFor({ state: 'visible' });
  await ask(chat, REWIND_FIRST);
  await chat.locator('.msg.assistant', { hasText: REWIND_FIRST_ANSWER }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  const readmeBefore = readFileSync(join(folder, 'README.md'), 'utf8');
  await ask(chat, REWIND_PROMPT);
  for (const file of ['CHANGES.md', 'README.md']) {
    const card = chat.locator('.card.approval.pending', { hasText: file });
    await card.waitFor({ state: 'visible' });
    await card.locator('button[data-decision="allowOnce"]').click();
  }
  await chat.locator('.msg.assistant', { hasText: REWIND_ANSWER }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  if (!existsSync(join(folder, 'CHANGES.md')) || !readFileSync(join(folder, 'README.md'), 'utf8').includes(README_EDITED)) {
    throw new Error('the rewind scenario\'s run did not write CHANGES.md and README.md');
  }
  const original = await chat.locator('#session').inputValue();
  // The prompt just sent gets its actions once the run ended (shown on hover).
  const rewindMsg = chat.locator('.msg.user', { hasText: REWIND_PROMPT });
  await rewindMsg.locator('.prompt-actions[aria-label="Prompt 2"]').waitFor({ state: 'attached' });
  await rewindMsg.hover();
  await rewindMsg.locator('button[data-action="fork"]').click();
  await chat.locator('.notice', { hasText: 'Forked from another session' }).waitFor({ state: 'visible' });
  await chat.locator('.notice', { hasText: 'The original session is unchanged' }).waitFor({ state: 'visible' });
  await chat.locator('.msg.assistant', { hasText: REWIND_FIRST_ANSWER }).waitFor({ state: 'visible' });
  if ((await chat.locator('.msg.user', { hasText: REWIND_PROMPT }).count()) > 0) {
    throw new Error('the fork has the prompt it was forked before');
  }
  const forked = await chat.locator('#session').inputValue();
  if (!forked || forked === original || (await chat.locator('#prompt').inputValue()) !== REWIND_PROMPT) {
    throw new Error(`fork: session ${original} → ${forked}, prompt box ${JSON.stringify(await chat.locator('#prompt').inputValue())}`);
  }
  if ((await chat.locator(`#session option[value="${original}"]`).count()) !== 1) {
    throw new Error('the original session is not listed any more after the fork');
  }
  log(`chat: Fork from here: ${forked} has the conversation before prompt 2 (the prompt in the box); ${original} still listed`);
  await chat.locator('#prompt').fill('');
  await chat.locator('#session').selectOption(original);
  await rewindMsg.waitFor({ state: 'visible' });
  await rewindMsg.locator('.prompt-actions').waitFor({ state: 'attached' });
  await rewindMsg.hover();
  await rewindMsg.locator('button[data-action="rewind"]').click();
  const quick = page.locator('.quick-input-widget');
  const rows = quick.locator('.quick-input-list .monaco-list-row');
  await quick.locator('.quick-input-title', { hasText: 'Rewind to before prompt 2' }).waitFor({ state: 'visible' });
  await rows.filter({ hasText: 'Code and conversation' }).first().click();
  await rows.filter({ hasText: 'CHANGES.md' }).first().waitFor({ state: 'visible' });
  const readmeRow = rows.filter({ hasText: 'README.md' }).first();
  await readmeRow.filter({ hasText: 'restored' }).waitFor({ state: 'visible' });
  await rows.filter({ hasText: 'CHANGES.md' }).filter({ hasText: 'deleted' }).first().waitFor({ state: 'visible' });
  // README.md's diff: the file now (left) and after the rewind (right); the list stays up.
  await readmeRow.click();
  const rewindDiff = page.locator('.monaco-diff-editor').first();
  await rewindDiff.waitFor({ state: 'visible' });
  await page.locator('.tabs-container .tab', { hasText: 'README.md (now ↔ after the rewind' }).first().waitFor({ state: 'visible' });
  await page.locator('.monaco-diff-editor .editor.original', { hasText: 'listed in CHANGES.md' }).first().waitFor({ state: 'visible' });
  if ((await page.locator('.editor-actions [aria-label^="PseudoClaude: Allow This Change"]').count()) > 0) {
    throw new Error('the rewind diff shows the edit approval buttons (Allow This Change)');
  }
  await rows.filter({ hasText: /Rewind.*restores/ }).first().waitFor({ state: 'visible' });
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-rewind-preview.png', shots);
  await rows.filter({ hasText: /Rewind.*restores/ }).first().click();
  await chat.locator('.notice', { hasText: 'Rewound to before prompt 2' }).waitFor({ state: 'visible' });
  await rewindDiff.waitFor({ state: 'detached' });
  await chat.locator('.event.marker-rewind').first().waitFor({ state: 'visible' });
  await chat.locator('.msg.user.out-of-context', { hasText: REWIND_PROMPT }).waitFor({ state: 'visible' });
  if ((await chat.locator('.msg.user.out-of-context .prompt-actions').count()) > 0) {
    throw new Error('a rewound prompt still offers Rewind / Fork');
  }
  if (existsSync(join(folder, 'CHANGES.md')) || readFileSync(join(folder, 'README.md'), 'utf8') !== readmeBefore) {
    throw new Error(`after the rewind: CHANGES.md ${existsSync(join(folder, 'CHANGES.md')) ? 'still there' : 'gone'}, README.md ${JSON.stringify(readFileSync(join(folder, 'README.md'), 'utf8'))}`);
  }
  if ((await chat.locator('#prompt').inputValue()) !== REWIND_PROMPT) {
    throw new Error('the rewound prompt is not back in the prompt box');
  }
  // README.md as it is on disk again beside the chat; the first prompt's actions, as the
  // pointer over it shows them.
  await runCommand(page, 'Go to File');
  await page.keyboard.type('README.md');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'README.md' }).first().waitFor({ state: 'visible' });
  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab.active', { hasText: 'README.md' }).first().waitFor({ state: 'visible' });
  await page.locator('.editor-instance .view-line', { hasText: 'It keeps sessions and memory.' }).first().waitFor({ state: 'visible' });
  const firstMsg = chat.locator('.msg.user', { hasText: REWIND_FIRST });
  await firstMsg.hover();
  await firstMsg.locator('button[data-action="rewind"]').waitFor({ state: 'visible' });
  // Faded in all the way (not caught half-way in the picture).
  await firstMsg.locator('.prompt-actions').evaluate((e) => new Promise((resolve) => {
    const check = () => (getComputedStyle(e).opacity === '1' ? resolve(undefined) : requestAnimationFrame(check));
    check();
  }));
  await shot(page, 'vscode-rewind-done.png', shots);
  await page.mouse.move(5, 5);
  await chat.locator('#prompt').fill('');
  log('chat: Rewind to here… (code and conversation): README.md\'s diff from the list, CHANGES.md deleted and README.md back on disk, the conversation rewound');

  chat = await planAndTasks(page, chat, folder, shots);
  await hooksAndSkills(page, chat, folder, shots);
  await subAgents(page, chat, shots);

  await mcpServers(page, { tmp, dirs, serverCommand, shots });
  await sessionsAndWorktrees(page, { tmp, dirs, serverCommand, shots, baseUrl });

  const errors = await page.locator('.notifications-toasts .notification-toast', { hasText: 'PseudoClaude' }).allInnerTexts();
  if (errors.some((t) => /failed|did not start/i.test(t))) {
    throw new Error(`error notifications: ${errors.join(' | ')}`);
  }
  const serverLog = findServerLog(dirs.userData);
  writeFileSync(join(opts.out, 'pseudoclaude-server.log'), serverLog);
  const started = `starting ${serverCommand.join(' ')} (from pseudoclaude.server.command)`;
  if (!serverLog.includes(started)) {
    throw new Error(`the server was not started from the Machine setting (no "${started}" in the log)`);
  }
  const bad = serverLog.split('\n').filter((l) => /\[error\]|expected an object|failed/i.test(l));
  if (bad.length > 0) {
    throw new Error(`the extension's server log has errors:\n${bad.join('\n')}`);
  }
  writeFileSync(
    join(opts.out, 'result.json'),
    JSON.stringify({ ok: true, meter: meterText, seconds: (Date.now() - t0) / 1000, screenshots: shots }, null, 2),
  );
}

/** The lines the editor shows (its text, as far as it is rendered: all of a short file). */
async function editorText(page) {
  const lines = await page.locator('.editor-instance .monaco-editor .view-lines .view-line').evaluateAll((nodes) =>
    nodes
      .map((n) => ({ top: parseFloat(n.style.top || '0'), text: (n.textContent ?? '').replace(/\u00a0/g, ' ') }))
      .sort((a, b) => a.top - b.top)
      .map((l) => l.text));
  return lines.join('\n');
}

async function waitForEditorText(page, test, what) {
  const deadline = Date.now() + 20_000;
  let text = '';
  while (Date.now() < deadline) {
    text = await editorText(page);
    if (test(text)) {
      return text;
    }
    await page.waitForTimeout(200);
  }
  throw new Error(`the editor does not show ${what}:\n${text}`);
}

/**
 * Permission modes and rules. The prompt box's mode picker shows `Mode: default`; open, it lists
 * the modes offered (not bypassPermissions: permissions.allowBypass is off) with what each
 * means; plan refuses a command without asking (the tool card denied); Shift+Tab goes on to
 * strict, "PseudoClaude: Set Permission Mode" back to default. An approval of `make test` shows
 * why it asks and "Always allow `Bash(make test:*)`"; that answer writes the rule to the
 * folder's .PseudoClaude/permissions.local.yaml and the next `make test` runs unasked. Show
 * Permissions lists the rule (local) and the sandbox.
 */
async function permissionModes(page, chat, folder, shots) {
  const button = chat.locator('#mode');
  await button.locator('.mode-name', { hasText: /^default$/ }).waitFor({ state: 'visible' });
  await button.click();
  const menu = chat.locator('#mode-menu');
  await menu.waitFor({ state: 'visible' });
  const offered = await menu.locator('.mode-item').evaluateAll((rows) => rows.map((r) => r.dataset.mode));
  if (offered.join(',') !== 'strict,default,acceptEdits,plan') {
    throw new Error(`the mode picker offers ${JSON.stringify(offered)}`);
  }
  await menu.locator('.mode-item.checked', { hasText: 'edits and commands follow your approval settings' }).waitFor({ state: 'visible' });
  await menu.locator('.mode-menu-notes', { hasText: 'permissions.allowBypass' }).waitFor({ state: 'visible' });
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-mode-picker.png', shots);
  await menu.locator('.mode-item[data-mode="plan"]').click();
  await menu.waitFor({ state: 'hidden' });
  await button.locator('.mode-name', { hasText: /^plan$/ }).waitFor({ state: 'visible' });
  log('modes: the picker lists strict, default, acceptEdits and plan with their meanings; plan picked');

  // Plan mode: a command is refused without asking.
  await ask(chat, PLAN_PROMPT);
  await chat.locator('.msg.assistant', { hasText: PLAN_ANSWER }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  await chat.locator('details.tool.tool-denied', { hasText: 'make build' }).waitFor({ state: 'visible' });
  if ((await chat.locator('.card.approval', { hasText: 'make build' }).count()) > 0) {
    throw new Error('plan mode asked about a command instead of refusing it');
  }
  log('modes: in plan mode run_command was refused without asking');

  // Shift+Tab in the prompt box: the next mode (plan → strict); the palette's command: default.
  await chat.locator('#prompt').click();
  await chat.locator('#prompt').press('Shift+Tab');
  await button.locator('.mode-name', { hasText: /^strict$/ }).waitFor({ state: 'visible' });
  await runCommand(page, 'PseudoClaude: Set Permission Mode');
  const quick = page.locator('.quick-input-widget');
  await quick.locator('.quick-input-title', { hasText: 'PseudoClaude: Set Permission Mode' }).waitFor({ state: 'visible' });
  await quick.locator('.quick-input-list .monaco-list-row', { hasText: 'edits and commands follow your approval settings' }).first().click();
  await button.locator('.mode-name', { hasText: /^default$/ }).waitFor({ state: 'visible' });
  await page.locator('.notifications-toasts .notification-toast', { hasText: 'default mode' }).first().waitFor({ state: 'visible' });
  await runCommand(page, 'Notifications: Clear All Notifications');
  log('modes: Shift+Tab went to strict, Set Permission Mode back to default');

  // Always allow: the card says why it asks and which rule the answer adds.
  await ask(chat, ALWAYS_PROMPT);
  const card = chat.locator('.card.approval.pending', { hasText: 'make test' });
  await card.waitFor({ state: 'visible' });
  await card.locator('.approval-reason').waitFor({ state: 'visible' });
  const always = card.locator('button[data-decision="allowAlways"]');
  await always.locator('code', { hasText: ALWAYS_RULE }).waitFor({ state: 'visible' });
  await card.locator('input.deny-message[placeholder="Tell the agent why (optional)"]').waitFor({ state: 'visible' });
  await always.focus();
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-approval-always.png', shots);
  await always.click();
  await chat.locator('.approval-line.approval-allowAlways', { hasText: ALWAYS_RULE }).waitFor({ state: 'visible' });
  await chat.locator('.msg.assistant', { hasText: ALWAYS_ANSWER }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  const local = join(folder, '.PseudoClaude', 'permissions.local.yaml');
  if (!existsSync(local) || !readFileSync(local, 'utf8').includes(ALWAYS_RULE)) {
    throw new Error(`${local} does not have ${ALWAYS_RULE}: ${existsSync(local) ? JSON.stringify(readFileSync(local, 'utf8')) : 'no file'}`);
  }
  const asked = await chat.locator('.card.approval, .approval-line').count();
  await ask(chat, ALWAYS_AGAIN);
  await chat.locator('.msg.assistant', { hasText: ALWAYS_AGAIN_ANSWER }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  if ((await chat.locator('.card.approval, .approval-line').count()) !== asked) {
    throw new Error('the second make test was asked about although it is always allowed');
  }
  log(`modes: Always allow wrote ${ALWAYS_RULE} to permissions.local.yaml; the next make test was not asked`);

  // Show Permissions: the rule (local) and the sandbox, in a read-only report.
  await runCommand(page, 'PseudoClaude: Show Permissions');
  await page.locator('.tabs-container .tab.active', { hasText: 'Permissions of project' }).first().waitFor({ state: 'visible' });
  await page.locator('.editor-instance .view-line', { hasText: ALWAYS_RULE }).first().waitFor({ state: 'visible' });
  await page.locator('.editor-instance .view-line', { hasText: 'local: .PseudoClaude/permissions.local.yaml' }).first().waitFor({ state: 'visible' });
  await page.locator('.editor-instance .view-line', { hasText: 'Sandbox:' }).first().waitFor({ state: 'visible' });
  await runCommand(page, 'View: Close All Editors');
  await page.locator('.tabs-container .tab', { hasText: 'Permissions of project' }).first().waitFor({ state: 'detached' });
  log('modes: Show Permissions lists the rule with its source and the sandbox');
}

/**
 * Hooks and skills: the folder gets a `.PseudoClaude/hooks.yaml` (it waits for an approval).
 * Show Hooks (the chat's menu) lists its hooks with their event, source and status, and first
 * "Review this folder's hooks…": chosen, the approval shows in the chat; Allow for this project
 * makes them run (the chat says so). Show Skills lists the skills (the built-in ones and one in
 * .claude/skills); choosing /explain-code puts it in the prompt box. /status shows the hooks
 * active and the skills.
 */
async function hooksAndSkills(page, chat, folder, shots) {
  mkdirSync(join(folder, '.PseudoClaude'), { recursive: true });
  writeFileSync(join(folder, '.PseudoClaude', 'hooks.yaml'), [
    'hooks:',
    '  - name: log-edits',
    '    event: PostToolUse',
    '    if: {all_of: [{field: tool_name, match: {type: exact, value: edit_file}}]}',
    "    action: {type: shell, command: 'echo edited >> .PseudoClaude/edits.log'}",
    '    async: true',
    '  - name: today',
    '    event: UserPromptSubmit',
    `    action: {type: shell, command: 'echo "Today is $(date +%A)."'}`,
    '',
  ].join('\n'));
  mkdirSync(join(folder, '.claude', 'skills', 'explain-code'), { recursive: true });
  writeFileSync(join(folder, '.claude', 'skills', 'explain-code', 'SKILL.md'), [
    '---',
    'name: explain-code',
    'description: Explains code with diagrams and analogies. Use when the user asks how code works.',
    '---',
    'Explain the code the user names: what it does, then a small diagram, then one analogy.',
    '',
  ].join('\n'));
  const quick = page.locator('.quick-input-widget');
  const rows = quick.locator('.quick-input-list .monaco-list-row');

  await runCommand(page, 'PseudoClaude: Show Hooks');
  await quick.locator('.quick-input-title', { hasText: 'Hooks of project' }).waitFor({ state: 'visible' });
  await rows.filter({ hasText: 'today' }).first().waitFor({ state: 'visible' });
  await rows.filter({ hasText: 'waits for your approval' }).first().waitFor({ state: 'visible' });
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-hooks.png', shots);
  await rows.filter({ hasText: "Review this folder's hooks" }).first().click();
  const card = chat.locator('.card.approval.pending', { hasText: 'hooks' });
  await card.waitFor({ state: 'visible' });
  await card.locator('button[data-decision="allowSession"]').click();
  await chat.locator('.notice', { hasText: "This folder's hooks run now: log-edits, today" }).waitFor({ state: 'visible' });
  log("hooks: Show Hooks lists the folder's hooks waiting; Review… asked again, allowed: they run");

  await runCommand(page, 'PseudoClaude: Show Skills');
  await quick.locator('.quick-input-title', { hasText: 'Skills of project' }).waitFor({ state: 'visible' });
  await rows.filter({ hasText: '/explain-code' }).first().waitFor({ state: 'visible' });
  await rows.filter({ hasText: '/review' }).first().waitFor({ state: 'visible' });
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-skills.png', shots);
  await rows.filter({ hasText: '/explain-code' }).first().click();
  await quick.waitFor({ state: 'hidden' });
  const promptBox = chat.locator('#prompt');
  for (let i = 0; (await promptBox.inputValue()) !== '/explain-code '; i++) {
    if (i === 100) {
      throw new Error(`the prompt box has ${JSON.stringify(await promptBox.inputValue())}, not /explain-code`);
    }
    await page.waitForTimeout(100);
  }
  await promptBox.fill('');
  log('skills: Show Skills lists the built-in and the folder\'s skills; choosing one puts /explain-code in the prompt box');

  // The task list of the plan before folds to its header line: the card gets the room.
  const tasks = chat.locator('#tasks');
  if (await tasks.locator('.tasks-list').isVisible().catch(() => false)) {
    await tasks.locator('.tasks-header').click();
    await tasks.locator('.tasks-list').waitFor({ state: 'hidden' });
  }
  await ask(chat, '/status');
  const status = chat.locator('.card.status-card').last();
  await status.filter({ hasText: 'today (UserPromptSubmit, workspace): active' }).waitFor({ state: 'visible' });
  await status.scrollIntoViewIfNeeded();
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-status.png', shots);
  log('status: /status shows the session, the hooks active and the skills');
}

/**
 * Plan mode and the task list, in a new session: plan picked in the mode picker, a prompt; the
 * model keeps a task list (update_tasks: the checklist above the prompt box, `Tasks 0/3`) and
 * presents its plan (exit_plan_mode): a card with the plan as Markdown. Keep planning… opens a
 * field; its feedback (Enter) goes to the model, which presents the plan again (four tasks now).
 * Approve and accept edits: the mode picker shows acceptEdits and the model works through the
 * list, writing files without asking; the checklist follows it (done struck through, the task
 * in progress in bold with a spinner), folds to its header, comes back after a reload (from
 * `pseudoclaude/tasks`) and is not shown for a new session. Returns the chat's frame (reloaded).
 */
async function planAndTasks(page, chat, folder, shots) {
  await runCommand(page, 'View: Close All Editors');
  await chat.locator('#new').click();
  await chat.locator('.welcome').waitFor({ state: 'visible' });
  const modeButton = chat.locator('#mode');
  await modeButton.click();
  await chat.locator('#mode-menu .mode-item[data-mode="plan"]').click();
  await modeButton.locator('.mode-name', { hasText: /^plan$/ }).waitFor({ state: 'visible' });
  const tasks = chat.locator('#tasks');
  if (await tasks.isVisible()) {
    throw new Error('a new session shows a task list');
  }
  await ask(chat, PLAN_TASKS_PROMPT);
  const first = chat.locator('.card.approval.pending.approval-plan');
  await first.locator('.plan-body h2', { hasText: PLAN_TITLE }).waitFor({ state: 'visible' });
  await first.locator('.plan-body em', { hasText: 'world' }).waitFor({ state: 'visible' });
  await tasks.locator('.tasks-count', { hasText: '0/3' }).waitFor({ state: 'visible' });
  await chat.locator('details.tool.tool-waiting', { hasText: 'exit_plan_mode' }).waitFor({ state: 'visible' });
  log('plan: the plan in a card (Markdown), the checklist at 0/3');

  // Keep planning…: the feedback field (Enter sends it); the model presents the plan again.
  await first.locator('button[data-action="planFeedback"]').click();
  const field = first.locator('input.plan-feedback');
  await field.waitFor({ state: 'visible' });
  if (!(await field.evaluate((e) => e === document.activeElement))) {
    throw new Error('Keep planning… did not put the caret in the feedback field');
  }
  await field.pressSequentially(PLAN_FEEDBACK);
  await field.press('Enter');
  await chat.locator('.plan-line.approval-keepPlanning', { hasText: `Kept planning: “${PLAN_FEEDBACK}”` }).waitFor({ state: 'visible' });
  const second = chat.locator('.card.approval.pending.approval-plan', { hasText: 'docs/usage.md' });
  await second.waitFor({ state: 'visible' });
  await tasks.locator('.tasks-count', { hasText: '0/4' }).waitFor({ state: 'visible' });
  await modeButton.locator('.mode-name', { hasText: /^plan$/ }).waitFor({ state: 'visible' });
  log('plan: Keep planning with feedback; the model presented the plan again (4 tasks)');
  await second.locator('button[data-mode="acceptEdits"]').focus();
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-plan-approval.png', shots);

  // Approve and accept edits: the session's mode follows; the model works through the list.
  await second.locator('button[data-decision="approve"][data-mode="acceptEdits"]').click();
  await chat.locator('.plan-line.approval-approve', { hasText: 'Plan approved: acceptEdits' }).waitFor({ state: 'visible' });
  await modeButton.locator('.mode-name', { hasText: /^acceptEdits$/ }).waitFor({ state: 'visible' });
  await chat.locator('.msg.assistant', { hasText: PLAN_WRITING }).waitFor({ state: 'visible' });
  await tasks.locator('.tasks-count', { hasText: '2/4' }).waitFor({ state: 'visible' });
  await tasks.locator('.task-completed s', { hasText: TASK_NAMES[0] }).waitFor({ state: 'visible' });
  await tasks.locator('.task-in_progress', { hasText: TASK_NAMES[2] }).locator('.task-spinner').waitFor({ state: 'visible' });
  await tasks.locator('.task-pending', { hasText: TASK_NAMES[3] }).waitFor({ state: 'visible' });
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-tasks.png', shots);
  log('plan: approved with accept edits (the mode picker shows acceptEdits); the checklist at 2/4 mid-run');

  await chat.locator('.msg.assistant', { hasText: 'docs/usage.md explains the option' }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  await tasks.locator('.tasks-count.tasks-all-done', { hasText: '4/4' }).waitFor({ state: 'visible' });
  if (!existsSync(join(folder, 'src', 'cli.py')) || readFileSync(join(folder, 'docs', 'usage.md'), 'utf8') !== USAGE) {
    throw new Error('the approved plan did not write src/cli.py and docs/usage.md');
  }
  if ((await chat.locator('.card.approval:not(.approval-plan), .approval-line:not(.plan-line)', { hasText: /cli\.py|usage\.md/ }).count()) > 0) {
    throw new Error('acceptEdits asked about a write');
  }
  // The header folds the list (the count stays), and unfolds it.
  await tasks.locator('.tasks-header').click();
  await tasks.locator('.tasks-list').waitFor({ state: 'hidden' });
  await tasks.locator('.tasks-count', { hasText: '4/4' }).waitFor({ state: 'visible' });
  await tasks.locator('.tasks-header').click();
  await tasks.locator('.task-completed', { hasText: TASK_NAMES[3] }).waitFor({ state: 'visible' });
  log('plan: the run wrote both files without asking; the checklist at 4/4 folds and unfolds');

  // A reload: the list comes back from the server (pseudoclaude/tasks); a new session has none.
  await page.reload();
  await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible' });
  chat = await chatFrame(page);
  await chat.locator('.msg.assistant', { hasText: 'docs/usage.md explains the option' }).waitFor({ state: 'visible' });
  const reloaded = chat.locator('#tasks');
  await reloaded.locator('.tasks-count', { hasText: '4/4' }).waitFor({ state: 'visible' });
  await reloaded.locator('.task-completed', { hasText: TASK_NAMES[0] }).waitFor({ state: 'visible' });
  const planned = await chat.locator('#session').inputValue();
  await chat.locator('#new').click();
  await chat.locator('.welcome').waitFor({ state: 'visible' });
  await reloaded.waitFor({ state: 'hidden' });
  await chat.locator('#session').selectOption(planned);
  await reloaded.locator('.tasks-count', { hasText: '4/4' }).waitFor({ state: 'visible' });
  log('plan: after a reload the checklist is back; a new session shows none, the planned one its own again');
  return chat;
}

/**
 * The agent lives in the editor: src/greet.py opened and typed into (unsaved); the prompt box's
 * chip follows the active file and its selection, and its × leaves it out until the selection
 * changes; a prompt goes with the selected (unsaved) line, the chip shows under it, and the run's
 * edit_file changes the document in the editor: still unsaved, the file on disk as it was, and
 * Ctrl+Z takes the agent's edit back. Then Explain from the editor's context menu on a selection.
 */
async function editorContext(page, chat, folder, shots) {
  const file = join(folder, 'src', 'greet.py');
  const onDisk = readFileSync(file, 'utf8');
  await runCommand(page, 'Go to File');
  await page.keyboard.type('greet.py');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'greet.py' }).first().waitFor({ state: 'visible' });
  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab.active', { hasText: 'greet.py' }).first().waitFor({ state: 'visible' });
  await page.locator('.editor-instance .view-line', { hasText: 'def greet(name):' }).first().waitFor({ state: 'visible' });
  const chip = chat.locator('#chip .chip');
  await chip.filter({ hasText: 'greet.py' }).waitFor({ state: 'visible' });
  if ((await chat.locator('#chip .chip-dir').innerText()).trim() !== 'src/' || (await chip.locator('.chip-lines').count()) > 0) {
    throw new Error(`the chip of the open file: ${JSON.stringify(await chip.innerText())}`);
  }
  // Typed at the end of the file, not saved.
  await page.locator('.editor-instance .view-line', { hasText: 'print(greet("world"))' }).first().click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(TODO);
  const dirtyTab = page.locator('.tabs-container .tab.dirty', { hasText: 'greet.py' }).first();
  await dirtyTab.waitFor({ state: 'visible' });
  // Lines 1-2 selected: the chip says so; its × leaves it out; another selection brings it back.
  await page.keyboard.press('Control+Home');
  await page.keyboard.press('Shift+ArrowDown');
  await page.keyboard.press('Shift+ArrowDown');
  await chip.locator('.chip-lines', { hasText: ':1-2' }).waitFor({ state: 'visible' });
  await chip.locator('.chip-remove').click();
  await chat.locator('#chip').waitFor({ state: 'hidden' });
  await page.locator('.editor-instance .view-line', { hasText: TODO }).first().click();
  await page.keyboard.press('End');
  await page.keyboard.press('Shift+Home');
  await chip.locator('.chip-lines', { hasText: ':7' }).waitFor({ state: 'visible' });
  log('editor: the chip follows the active file and its selection (src/greet.py, :1-2, removed with ×, back with :7)');

  // The prompt goes with the selected (unsaved) line; the edit goes into the editor.
  await ask(chat, EDITOR_PROMPT);
  const sent = chat.locator('.msg.user', { hasText: EDITOR_PROMPT });
  await sent.locator('.sent-context .chip', { hasText: 'greet.py' }).filter({ hasText: ':7' }).waitFor({ state: 'visible' });
  const write = chat.locator('.card.approval.pending', { hasText: 'greet.py' });
  await write.waitFor({ state: 'visible' });
  await page.locator('.monaco-diff-editor .editor.modified', { hasText: '__main__' }).first().waitFor({ state: 'visible' });
  await write.locator('button[data-decision="allowOnce"]').click();
  await chat.locator('.msg.assistant', { hasText: EDITOR_ANSWER }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  await page.locator('.monaco-diff-editor').first().waitFor({ state: 'detached' });
  await page.locator('.tabs-container .tab.active', { hasText: 'greet.py' }).first().waitFor({ state: 'visible' });
  const edited = await waitForEditorText(page, (t) => t.includes('if __name__ == "__main__":') && !t.includes(TODO), 'the agent\'s edit');
  if (!edited.includes('    main()') || !edited.includes('def greet(name):')) {
    throw new Error(`the editor after the agent's edit:\n${edited}`);
  }
  await dirtyTab.waitFor({ state: 'visible' });
  if (readFileSync(file, 'utf8') !== onDisk) {
    throw new Error(`the agent wrote greet.py on disk: ${JSON.stringify(readFileSync(file, 'utf8'))}`);
  }
  const tool = chat.locator('details.tool', { hasText: 'edit_file' }).last();
  await tool.locator('.tool-status', { hasText: 'done' }).waitFor({ state: 'visible' });
  await chat.locator('#chip .chip', { hasText: 'greet.py' }).waitFor({ state: 'visible' });
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-editor-context.png', shots);
  log('editor: edit_file changed the unsaved document in the editor (still unsaved; greet.py on disk unchanged)');

  // Ctrl+Z in the editor takes the agent's edit back (the user's typing stays, unsaved).
  await runCommand(page, 'View: Focus Active Editor Group');
  await page.keyboard.press('Control+Z');
  await waitForEditorText(page, (t) => t.includes(TODO) && !t.includes('__main__'), 'the TODO again after Ctrl+Z');
  await dirtyTab.waitFor({ state: 'visible' });
  if (readFileSync(file, 'utf8') !== onDisk) {
    throw new Error('greet.py changed on disk after Ctrl+Z');
  }
  log('editor: Ctrl+Z took the agent\'s edit back');

  // Explain from the editor's context menu: the selected function goes with its prompt.
  await page.keyboard.press('Control+Home');
  await page.keyboard.press('Shift+ArrowDown');
  await page.keyboard.press('Shift+ArrowDown');
  await chip.locator('.chip-lines', { hasText: ':1-2' }).waitFor({ state: 'visible' });
  await page.locator('.editor-instance .view-line', { hasText: 'def greet(name):' }).first().click({ button: 'right' });
  const explain = page.locator('.monaco-menu .action-item', { hasText: 'PseudoClaude: Explain' }).first();
  await explain.waitFor({ state: 'visible' });
  for (const title of ['PseudoClaude: Fix', 'PseudoClaude: Ask about selection']) {
    await page.locator('.monaco-menu .action-item', { hasText: title }).first().waitFor({ state: 'visible' });
  }
  await explain.click();
  // A click on a menu just opened is sometimes lost (the menu stays up, its item highlighted):
  // Enter on that item then.
  await page.waitForTimeout(1000);
  if (await explain.isVisible().catch(() => false)) {
    log('editor: the click on Explain was lost; Enter on it');
    await explain.hover();
    await page.keyboard.press('Enter');
  }
  const explained = chat.locator('.msg.user', { hasText: EXPLAIN_PROMPT });
  await explained.locator('.sent-context .chip', { hasText: 'greet.py' }).filter({ hasText: ':1-2' }).waitFor({ state: 'visible' });
  await chat.locator('.msg.assistant', { hasText: EXPLAIN_ANSWER }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  log('editor: Explain from the context menu sent the selection with its prompt');

  // The server's code actions, from the light bulb (Ctrl+.): Ask about selection puts the caret
  // in the prompt box with the selection attached and sends nothing.
  const prompts = await chat.locator('.msg.user').count();
  await runCommand(page, 'View: Focus Active Editor Group');
  await page.keyboard.press('Control+Period');
  const askRow = page.locator('.action-widget .monaco-list-row', { hasText: 'PseudoClaude: Ask about selection' }).first();
  await askRow.waitFor({ state: 'visible' });
  await page.locator('.action-widget .monaco-list-row', { hasText: 'PseudoClaude: Explain' }).first().waitFor({ state: 'visible' });
  await askRow.click();
  await chat.waitForFunction(() => document.activeElement?.id === 'prompt', undefined, { timeout: 10_000 });
  await chip.locator('.chip-lines', { hasText: ':1-2' }).waitFor({ state: 'visible' });
  await page.waitForTimeout(500);
  if ((await chat.locator('.msg.user').count()) !== prompts || !(await chat.locator('#send:not([disabled])').isVisible())) {
    throw new Error('Ask about selection sent a prompt');
  }
  log('editor: Ask about selection (the light bulb\'s code action) put the caret in the prompt box, the selection attached');

  // Back to the file as it is on disk, no editor open.
  await runCommand(page, 'View: Focus Active Editor Group');
  await runCommand(page, 'File: Revert File');
  await dirtyTab.waitFor({ state: 'detached' });
  await runCommand(page, 'View: Close All Editors');
  await page.locator('.tabs-container .tab', { hasText: 'greet.py' }).first().waitFor({ state: 'detached' });
  await chat.locator('#chip').waitFor({ state: 'hidden' });
  if (readFileSync(file, 'utf8') !== onDisk) {
    throw new Error('greet.py changed on disk');
  }
}

/**
 * MCP servers, in a second folder (a new window): `echo` in the Machine settings
 * (`pseudoclaude.mcp.servers` is machine-scoped), `project-echo` in the folder's .mcp.json. The
 * project server's question shows in the chat as the folder opens (answered Allow once); a run
 * calls mcp__echo__echo (its approval card: approvals.mcp is ask by default; then the tool card
 * with the echo); the header's MCP button counts two servers and its menu lists both ready, with
 * their tools (the echo server's unfolded); `/mcp` opens the same menu.
 */
async function mcpServers(page, { tmp, dirs, serverCommand, shots }) {
  const folder = join(tmp, 'mcp-project');
  mkdirSync(folder);
  writeFileSync(join(folder, 'README.md'), '# MCP demo\n\nA folder with a project MCP server.\n');
  writeFileSync(
    join(folder, '.mcp.json'),
    JSON.stringify({ mcpServers: { 'project-echo': { command: opts.python, args: [ECHO_SERVER] } } }, null, 2),
  );
  // The folder's own settings file, as a cloned repository could ship it: its allow waits for
  // the user (its baseUrl too, were it not for the user's own pseudoclaude.baseUrl).
  mkdirSync(join(folder, '.PseudoClaude'));
  writeFileSync(
    join(folder, '.PseudoClaude', 'config.yaml'),
    'baseUrl: http://127.0.0.1:9/v1\napprovals:\n  mcp: allow\n',
  );
  writeFileSync(
    join(dirs.userData, 'Machine', 'settings.json'),
    JSON.stringify(
      {
        'pseudoclaude.server.command': serverCommand,
        'pseudoclaude.mcp.servers': { echo: { command: opts.python, args: [ECHO_SERVER] } },
      },
      null,
      2,
    ),
  );
  await page.goto(`${new URL(page.url()).origin}/?folder=${encodeURIComponent(folder)}`);
  await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible' });
  const icon = page.locator('.part.activitybar .action-item [aria-label^="PseudoClaude"]').first();
  await icon.waitFor({ state: 'visible' });
  if (!(await page.locator('.part.sidebar .pane-header', { hasText: 'Chat' }).first().isVisible())) {
    await icon.click();
  }
  // The side bar as wide as in the first window (each folder has its own layout).
  const bar = await page.locator('.part.sidebar').boundingBox();
  if (bar && bar.width < 500) {
    await page.mouse.move(bar.x + bar.width + 1, bar.y + bar.height / 2);
    await page.mouse.down();
    await page.mouse.move(bar.x + 560, bar.y + bar.height / 2, { steps: 8 });
    await page.mouse.up();
  }
  const chat = await chatFrame(page);
  log('MCP: a folder with .mcp.json opened');

  // The folder's settings file's question, in the chat, as the folder opens: the URL first.
  const settings = chat.locator('.card.approval.pending.approval-permissions');
  await settings.waitFor({ state: 'visible' });
  const rules = await settings.innerText();
  if (!rules.includes("This folder's .PseudoClaude/config.yaml asks to use its own settings") || !rules.includes('approvals.mcp: allow') || rules.includes('baseUrl')) {
    throw new Error(`the settings question: ${JSON.stringify(rules)}`);
  }
  await settings.locator('button[data-decision="deny"]').focus();
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-settings-approval.png', shots);
  await settings.locator('button[data-decision="deny"]').click();
  await chat.locator('.approval-line.approval-deny', { hasText: "this folder's .PseudoClaude/config.yaml's settings" }).waitFor({ state: 'visible' });
  log("MCP: the folder's settings question in the chat, denied");

  // The project server's question, in the chat, as the folder opens: what it would run.
  const question = chat.locator('.card.approval.pending.approval-mcpServer', { hasText: 'project-echo' });
  await question.waitFor({ state: 'visible' });
  const asked = await question.innerText();
  if (!asked.includes("This project's .mcp.json wants to start the MCP server project-echo") || !asked.includes('echo_server.py')) {
    throw new Error(`the project server's question: ${JSON.stringify(asked)}`);
  }
  for (const label of ['Allow once', 'Allow for this project', 'Deny']) {
    await question.locator('button', { hasText: label }).waitFor({ state: 'visible' });
  }
  await question.locator('button[data-decision="allowOnce"]').click();
  await chat.locator('.approval-line.approval-allowOnce', { hasText: 'start the MCP server project-echo' }).waitFor({ state: 'visible' });
  log('MCP: the project server\'s question in the chat, answered Allow once');

  // A run calls the echo server's tool: its approval (with the arguments), then the tool card.
  await ask(chat, MCP_PROMPT);
  const call = chat.locator('.card.approval.pending.approval-mcp', { hasText: 'Call echo of the MCP server echo' });
  await call.waitFor({ state: 'visible' });
  await call.locator('.approval-args pre', { hasText: MCP_TEXT }).waitFor({ state: 'visible' });
  await chat.locator('details.tool.tool-waiting', { hasText: 'mcp__echo__echo' }).waitFor({ state: 'visible' });
  await call.locator('button[data-decision="allowOnce"]').focus();
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-mcp-approval.png', shots);
  await call.locator('button[data-decision="allowOnce"]').click();
  const card = chat.locator('details.tool', { hasText: 'mcp__echo__echo' });
  await card.locator('.tool-status', { hasText: 'done' }).waitFor({ state: 'visible' });
  await chat.locator('.msg.assistant', { hasText: MCP_ANSWER }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  await card.locator('summary').click();
  await card.locator('.card-pre', { hasText: MCP_TEXT }).first().waitFor({ state: 'visible' });
  await card.locator('summary').click();
  log('MCP: mcp__echo__echo approved in its card and answered');

  // The header's MCP button counts the servers; its menu lists both ready, with their tools.
  const button = chat.locator('#mcp');
  await button.locator('.mcp-count', { hasText: '2' }).waitFor({ state: 'visible' });
  const quick = page.locator('.quick-input-widget');
  const rows = quick.locator('.quick-input-list .monaco-list-row');
  const serverRow = (name, source) => rows.filter({ hasText: `ready · ` }).filter({ hasText: source }).filter({ hasText: name }).first();
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    await button.click();
    await quick.locator('.quick-input-title', { hasText: 'MCP servers of mcp-project' }).waitFor({ state: 'visible' });
    try {
      // The approved server starts in the background: the menu follows it.
      await serverRow('project-echo', '.mcp.json').waitFor({ state: 'visible', timeout: 15_000 });
      await serverRow('echo', 'your settings').waitFor({ state: 'visible', timeout: 5000 });
      break;
    } catch (e) {
      if (Date.now() > deadline) {
        throw new Error(`the MCP menu: ${(await rows.allInnerTexts()).join(' | ')}`);
      }
      await page.keyboard.press('Escape');
    }
  }
  await rows.filter({ hasText: 'Open the pseudoclaude.mcp.servers setting' }).first().waitFor({ state: 'visible' });
  // The project server's tools, unfolded under it (Enter on its row).
  await serverRow('project-echo', '.mcp.json').click();
  await rows.filter({ hasText: 'tool of project-echo' }).filter({ hasText: 'dotted.name' }).first().waitFor({ state: 'visible' });
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-mcp-servers.png', shots);
  await page.keyboard.press('Escape');
  await quick.waitFor({ state: 'hidden' });
  log('MCP: the menu lists echo (your settings) and project-echo (.mcp.json), both ready, with their tools');

  // /mcp opens the same menu (not a prompt for the model).
  await ask(chat, '/mcp');
  await quick.locator('.quick-input-title', { hasText: 'MCP servers of mcp-project' }).waitFor({ state: 'visible' });
  await page.keyboard.press('Escape');
  await quick.waitFor({ state: 'hidden' });
  if ((await chat.locator('.msg.user', { hasText: '/mcp' }).count()) > 0) {
    throw new Error('/mcp went to the model');
  }
  log('MCP: /mcp opens the menu');
}

/**
 * Sessions at once and worktree sessions, in a third folder (a git repository). A terminal run
 * (`pseudoclaude run --session A`, another process) writes session A while the chat streams a
 * new session B: both are marked running (the chat's session list, the Sessions view). A prompt
 * for A meanwhile is refused with the busy card (Fork, Wait); Wait sends it once the terminal's
 * run is over, after that run's turn. Then "New Session in a Worktree": the header shows the
 * branch; a run writes in the worktree only; Remove is refused for changes not applied (kept);
 * Changes lists the files and opens a diff of the folder's file and the worktree's; Apply with a
 * file changed in the folder too applies nothing and names it; Apply again writes both files;
 * Remove deletes the worktree and its branch.
 */
async function sessionsAndWorktrees(page, { tmp, dirs, serverCommand, shots, baseUrl }) {
  const folder = join(tmp, 'parser-project');
  mkdirSync(join(folder, 'src'), { recursive: true });
  writeFileSync(join(folder, 'README.md'), README_WT);
  writeFileSync(
    join(folder, 'src', 'tokenizer.py'),
    '"""Split the source into tokens for the parser."""\n\n\ndef tokens(source):\n    return source.split()\n',
  );
  const git = (...args) => {
    const r = spawnSync('git', args, { cwd: folder, encoding: 'utf8' });
    if (r.status !== 0) {
      throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    }
    return r.stdout;
  };
  git('init', '-q');
  git('config', 'user.email', 'smoke@example.com');
  git('config', 'user.name', 'Smoke');
  git('add', '.');
  git('commit', '-q', '-m', 'The parser');
  writeFileSync(join(dirs.userData, 'Machine', 'settings.json'), JSON.stringify({ 'pseudoclaude.server.command': serverCommand }, null, 2));
  await page.goto(`${new URL(page.url()).origin}/?folder=${encodeURIComponent(folder)}`);
  await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible' });
  const icon = page.locator('.part.activitybar .action-item [aria-label^="PseudoClaude"]').first();
  await icon.waitFor({ state: 'visible' });
  if (!(await page.locator('.part.sidebar .pane-header', { hasText: 'Chat' }).first().isVisible())) {
    await icon.click();
  }
  const bar = await page.locator('.part.sidebar').boundingBox();
  if (bar && bar.width < 500) {
    await page.mouse.move(bar.x + bar.width + 1, bar.y + bar.height / 2);
    await page.mouse.down();
    await page.mouse.move(bar.x + 560, bar.y + bar.height / 2, { steps: 8 });
    await page.mouse.up();
  }
  const chat = await chatFrame(page);
  await chat.locator('.welcome').waitFor({ state: 'visible' });
  log('sessions: a git repository opened');

  // Session A: a first prompt in the chat.
  await ask(chat, FIRST_WT_PROMPT);
  await chat.locator('.msg.assistant', { hasText: FIRST_WT_ANSWER }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  const sessionA = await chat.locator('#session').inputValue();
  if (!sessionA) {
    throw new Error('no session after the first prompt');
  }
  const sessionLog = join(folder, '.PseudoClaude', 'sessions', sessionA, 'conversation.jsonl');
  const logHas = (text) => existsSync(sessionLog) && readFileSync(sessionLog, 'utf8').includes(text);

  // A long run of session A from the chat; the chat switches to a new session B meanwhile (A goes
  // on in the background) and streams a prompt there: two runs at once, both marked running.
  await ask(chat, BG_PROMPT);
  await chat.locator('.msg.assistant.streaming', { hasText: 'Empty source' }).waitFor({ state: 'visible' });
  await chat.locator('#new').click();
  await chat.locator('.welcome').waitFor({ state: 'visible' });
  if (await chat.locator('#cancel').isVisible()) {
    throw new Error('the new session shows Stop: it does not run');
  }
  await ask(chat, STREAM_PROMPT);
  const streaming = chat.locator('.msg.assistant.streaming', { hasText: 'Empty input' });
  await streaming.waitFor({ state: 'visible' });
  const sessionB = await chat.locator('#session').inputValue();
  for (const id of [sessionA, sessionB]) {
    await chat.locator(`#session option[value="${id}"]`, { hasText: /^● / }).waitFor({ state: 'attached', timeout: 10_000 }).catch(async () => {
      throw new Error(`session ${id} is not marked running in the chat's list: ${(await chat.locator('#session option').allInnerTexts()).join(' | ')}`);
    });
  }
  if ((await chat.locator('.transcript').innerText()).includes('Empty source')) {
    throw new Error('session A\'s run shows in session B');
  }
  const sessionsHeader = page.locator('.part.sidebar .pane-header', { hasText: 'Sessions' }).first();
  await sessionsHeader.click();
  const sessionRows = page.locator('.part.sidebar .pane')
    .filter({ has: page.locator('.pane-header', { hasText: 'Sessions' }) }).locator('.monaco-list-row');
  await sessionRows.filter({ hasText: FIRST_WT_PROMPT }).filter({ hasText: 'running' }).first().waitFor({ state: 'visible' });
  await sessionRows.filter({ hasText: STREAM_PROMPT }).filter({ hasText: 'running' }).first().waitFor({ state: 'visible' });
  if (!(await streaming.isVisible())) {
    throw new Error('the chat stopped streaming before the screenshot');
  }
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-sessions-running.png', shots);
  await sessionsHeader.click();
  await chat.locator('.msg.assistant', { hasText: 'named after the bug' }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  log(`sessions: ${sessionB} streamed in the chat while ${sessionA} ran in the background; both marked running`);

  // Back to A while it still runs: its transcript as it is now, Stop, and the rest streams live.
  if (logHas(BG_ANSWER)) {
    throw new Error('session A\'s run ended too soon');
  }
  await chat.locator('#session').selectOption(sessionA);
  await chat.locator('.msg.user', { hasText: BG_PROMPT }).waitFor({ state: 'visible' });
  await chat.locator('#cancel').waitFor({ state: 'visible' });
  await chat.locator('.msg.assistant.streaming').waitFor({ state: 'visible' });
  await chat.locator('.msg.assistant', { hasText: BG_ANSWER }).waitFor({ state: 'visible', timeout: TIMEOUT });
  await chatIdle(chat);
  await chat.locator('.msg.assistant', { hasText: 'Empty source' }).waitFor({ state: 'visible' }); // the whole answer, reloaded
  log(`sessions: back to ${sessionA}: its transcript as it was, then live to its end`);
  await chat.locator('#session').selectOption(sessionB);
  await chat.locator('.msg.assistant', { hasText: 'named after the bug' }).waitFor({ state: 'visible' });

  // A terminal (VS Code's own) writes session A with `pseudoclaude run --session A`: another
  // process; its run goes silent for half a minute, then ends.
  const cliHome = join(tmp, 'cli-home');
  const cliBin = join(tmp, 'cli-bin');
  mkdirSync(join(cliHome, '.PseudoClaude'), { recursive: true });
  mkdirSync(cliBin, { recursive: true });
  writeFileSync(join(cliHome, '.PseudoClaude', 'config.yaml'), `provider: anthropic\nbaseUrl: ${baseUrl}\napiKey: sk-test\n`);
  writeFileSync(join(cliBin, 'pseudoclaude'), `#!/bin/sh\nexec '${opts.python}' -m pseudoclaude "$@"\n`, { mode: 0o755 });
  await runCommand(page, 'Go to File');
  await page.keyboard.type('tokenizer.py');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'tokenizer.py' }).first().waitFor({ state: 'visible' });
  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab.active', { hasText: 'tokenizer.py' }).first().waitFor({ state: 'visible' });
  await runCommand(page, 'Terminal: Create New Terminal');
  const terminal = page.locator('.part.panel .terminal-wrapper').first();
  await terminal.waitFor({ state: 'visible' });
  await page.waitForTimeout(1500); // the shell's prompt
  await page.keyboard.type(`export HOME='${cliHome}' PATH='${cliBin}':"$PATH" PS1='$ '; clear\n`);
  await page.waitForTimeout(500);
  await page.keyboard.type(`pseudoclaude run --session ${sessionA} "${SIDE_PROMPT}"\n`);
  const started = Date.now();
  while (!logHas(SIDE_PROMPT)) {
    if (Date.now() - started > TIMEOUT) {
      throw new Error(`the terminal's run did not start (${sessionLog})`);
    }
    await page.waitForTimeout(200);
  }
  await page.waitForTimeout(1500); // its first words in the terminal
  log(`sessions: a terminal runs session ${sessionA} (pseudoclaude run)`);


  // Back to A while the terminal still writes it: the prompt is refused, the card offers Fork and Wait.
  if (logHas(SIDE_ANSWER)) {
    throw new Error('the terminal\'s run ended too soon');
  }
  await chat.locator('#session').selectOption(sessionA);
  await chat.locator('.msg.assistant', { hasText: FIRST_WT_ANSWER }).waitFor({ state: 'visible' });
  await ask(chat, BUSY_PROMPT);
  const busy = chat.locator('.card.busy.busy-asking');
  await busy.waitFor({ state: 'visible' });
  const said = await busy.innerText();
  const writer = /Process (\d+) is writing it/.exec(said)?.[1];
  const cmdline = writer && existsSync(`/proc/${writer}/cmdline`) ? readFileSync(`/proc/${writer}/cmdline`, 'utf8') : '';
  if (!cmdline.includes('pseudoclaude') || !cmdline.includes('run') || !said.includes(BUSY_PROMPT)) {
    throw new Error(`the busy card names ${writer} (${JSON.stringify(cmdline)}): ${JSON.stringify(said)}`);
  }
  await busy.locator('button[data-action="busyFork"]').waitFor({ state: 'visible' });
  await busy.locator('button[data-action="busyWait"]').focus();
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-session-busy.png', shots);
  await busy.locator('button[data-action="busyWait"]').click();
  await chat.locator('.card.busy.busy-waiting').waitFor({ state: 'visible' });
  log('sessions: the busy session\'s prompt waits (Wait)');
  await chat.locator('.msg.assistant', { hasText: BUSY_ANSWER }).waitFor({ state: 'visible', timeout: TIMEOUT });
  await chatIdle(chat);
  if (!logHas(SIDE_ANSWER)) {
    throw new Error('the prompt was sent before the terminal\'s run ended');
  }
  const users = await chat.locator('.msg.user').allInnerTexts();
  const side = users.findIndex((t) => t.includes(SIDE_PROMPT));
  const mine = users.findIndex((t) => t.includes(BUSY_PROMPT));
  if (side < 0 || mine < side) {
    throw new Error(`after the wait: the terminal's prompt then the chat's, got ${JSON.stringify(users)}`);
  }
  if ((await chat.locator('.card.busy').count()) > 0) {
    throw new Error('a busy card is left after the prompt was sent');
  }
  log('sessions: once the terminal\'s run ended, the prompt went to the same session, after that run\'s turn');
  await runCommand(page, 'Terminal: Kill All Terminals');
  if (await page.locator('.part.panel').isVisible()) {
    await runCommand(page, 'View: Hide Panel');
  }
  await runCommand(page, 'View: Close All Editors');

  // A session in a git worktree of its own, from the chat's … menu.
  const chatHeader = page.locator('.part.sidebar .pane-header', { hasText: 'Chat' }).first();
  await chatHeader.hover();
  await chatHeader.locator('.action-label[aria-label^="More Actions"]').click();
  await page.locator('.monaco-menu .action-item', { hasText: 'New Session in a Worktree' }).first().click();
  const branch = chat.locator('#worktree .wt-branch');
  await branch.waitFor({ state: 'visible' });
  const branchName = (await branch.innerText()).trim();
  if (!/^pseudoclaude\//.test(branchName)) {
    throw new Error(`the worktree line shows ${JSON.stringify(branchName)}`);
  }
  await chat.locator('.notice', { hasText: 'New session in a git worktree of its own' }).waitFor({ state: 'visible' });
  await ask(chat, WORKTREE_PROMPT);
  for (const file of ['RELEASING.md', 'README.md']) {
    const card = chat.locator('.card.approval.pending', { hasText: file });
    await card.waitFor({ state: 'visible' });
    await card.locator('button[data-decision="allowOnce"]').click();
  }
  await chat.locator('.msg.assistant', { hasText: WORKTREE_ANSWER }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  const readme = readFileSync(join(folder, 'README.md'), 'utf8');
  const worktreeDir = join(folder, '.PseudoClaude', 'worktrees', branchName.replace(/^pseudoclaude\//, ''));
  if (existsSync(join(folder, 'RELEASING.md')) || readme.includes('RELEASING.md')) {
    throw new Error('the worktree session wrote into the folder');
  }
  if (!existsSync(join(worktreeDir, 'RELEASING.md')) || !readFileSync(join(worktreeDir, 'README.md'), 'utf8').includes('RELEASING.md')) {
    throw new Error(`the worktree ${worktreeDir} does not have the session's files`);
  }
  log(`worktree: ${branchName}: the run wrote RELEASING.md and README.md in ${worktreeDir} only`);

  // Remove, with changes not applied: refused, then kept (Cancel).
  const dialog = page.locator('.monaco-dialog-box');
  await chat.locator('#worktree button[data-action="worktreeRemove"]').click();
  await dialog.filter({ hasText: 'Remove the worktree of this session' }).waitFor({ state: 'visible' });
  await dialog.getByRole('button', { name: 'Remove', exact: true }).click();
  await dialog.filter({ hasText: 'This worktree has changes that are not in parser-project' }).waitFor({ state: 'visible' });
  await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
  await chat.locator('.notice', { hasText: 'The worktree stays' }).waitFor({ state: 'visible' });
  if (!existsSync(worktreeDir)) {
    throw new Error('the worktree went although Remove was refused and not confirmed');
  }
  log('worktree: Remove refused for changes not applied; kept');

  // Changes: the files and their action; README.md's diff (the folder's file and the worktree's).
  await chat.locator('#worktree button[data-action="worktreeChanges"]').click();
  const quick = page.locator('.quick-input-widget');
  const rows = quick.locator('.quick-input-list .monaco-list-row');
  await quick.locator('.quick-input-title', { hasText: `Worktree ${branchName}: 2 files changed` }).waitFor({ state: 'visible' });
  await rows.filter({ hasText: 'RELEASING.md' }).filter({ hasText: 'new file' }).first().waitFor({ state: 'visible' });
  const readmeRow = rows.filter({ hasText: 'README.md' }).filter({ hasText: 'changed' }).first();
  await readmeRow.click();
  await page.locator('.tabs-container .tab', { hasText: `README.md (folder ↔ ${branchName})` }).first().waitFor({ state: 'visible' });
  await page.locator('.monaco-diff-editor .editor.modified', { hasText: 'See RELEASING.md' }).first().waitFor({ state: 'visible' });
  await page.locator('.monaco-diff-editor .editor.original', { hasText: README_WT_LINE }).first().waitFor({ state: 'visible' });
  await rows.filter({ hasText: 'Apply to parser-project' }).first().waitFor({ state: 'visible' });
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-worktree-changes.png', shots);
  await page.keyboard.press('Escape');
  await quick.waitFor({ state: 'hidden' });
  await runCommand(page, 'View: Close All Editors');
  log('worktree: Changes lists both files; README.md\'s diff opened from the list');

  // Apply with README.md changed in the folder too: nothing applied, the conflict named.
  writeFileSync(join(folder, 'README.md'), `${readme}Edited by hand.\n`);
  await chat.locator('#worktree button[data-action="worktreeApply"]').click();
  const conflict = chat.locator('.card.worktree-result.worktree-warning');
  await conflict.waitFor({ state: 'visible' });
  const conflictText = await conflict.innerText();
  if (!conflictText.includes('Nothing applied: 1 file changed in parser-project too') || !conflictText.includes('README.md')) {
    throw new Error(`the conflict card: ${JSON.stringify(conflictText)}`);
  }
  if (existsSync(join(folder, 'RELEASING.md'))) {
    throw new Error('Apply wrote RELEASING.md although README.md was in conflict');
  }
  // Put back as it was: Apply writes both files.
  writeFileSync(join(folder, 'README.md'), readme);
  await chat.locator('#worktree button[data-action="worktreeApply"]').click();
  const applied = chat.locator('.card.worktree-result.worktree-info', { hasText: 'Applied 2 files to parser-project' });
  await applied.waitFor({ state: 'visible' });
  if (readFileSync(join(folder, 'RELEASING.md'), 'utf8') !== RELEASING || !readFileSync(join(folder, 'README.md'), 'utf8').includes('See RELEASING.md')) {
    throw new Error('Apply did not write the session\'s files into the folder');
  }
  // The folder's README.md as Apply left it, beside the chat.
  await runCommand(page, 'Go to File');
  await page.keyboard.type('README.md');
  const readmeFile = page.locator('.quick-input-list .monaco-list-row', { hasText: 'README.md' }).filter({ hasNotText: '.PseudoClaude' }).first();
  await readmeFile.waitFor({ state: 'visible' });
  await readmeFile.click();
  await page.locator('.editor-instance .view-line', { hasText: 'See RELEASING.md' }).first().waitFor({ state: 'visible' });
  await applied.scrollIntoViewIfNeeded();
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-worktree-apply.png', shots);
  await runCommand(page, 'View: Close All Editors');
  log('worktree: Apply named the conflict and wrote nothing; once put back, Apply wrote both files');

  // Remove: everything applied, so it goes (the worktree folder and its branch).
  await chat.locator('#worktree button[data-action="worktreeRemove"]').click();
  await dialog.filter({ hasText: 'Remove the worktree of this session' }).waitFor({ state: 'visible' });
  await dialog.getByRole('button', { name: 'Remove', exact: true }).click();
  await chat.locator('.notice', { hasText: 'Removed the worktree of session' }).waitFor({ state: 'visible' });
  await chat.locator('#worktree').waitFor({ state: 'hidden' });
  if (existsSync(worktreeDir) || git('branch', '--list', branchName).trim() !== '') {
    throw new Error(`after Remove: ${worktreeDir} ${existsSync(worktreeDir) ? 'is still there' : 'is gone'}, branch ${git('branch', '--list', branchName).trim()}`);
  }
  log('worktree: removed (its folder and branch); the session goes on in the folder');
}

/**
 * Sub-agents: the model's `agent` call is one card: the explore sub-agent's type and name, the
 * task, its calls as they run (not in the parent's stream), its state and usage, Stop while it
 * runs; once it ended, its answer and Open transcript (its conversation in the output).
 */
async function subAgents(page, chat, shots) {
  await runCommand(page, 'View: Close All Editors');
  await chat.locator('#new').click();
  await chat.locator('.welcome').waitFor({ state: 'visible' });
  await ask(chat, SUBAGENT_PROMPT);
  const card = chat.locator('details.agent-card');
  await card.locator('.agent-type', { hasText: 'explore' }).waitFor({ state: 'visible' });
  await card.locator('.agent-name', { hasText: 'finder' }).waitFor({ state: 'visible' });
  await card.locator('.agent-call.agent-call-done', { hasText: 'read_file' }).waitFor({ state: 'visible' });
  await card.locator('.agent-text', { hasText: 'Found it' }).waitFor({ state: 'visible' });
  if (!(await card.evaluate((d) => d.open && d.classList.contains('agent-running')))) {
    throw new Error('the running sub-agent\'s card is not open and running');
  }
  await card.locator('button[data-action="stopAgent"]').waitFor({ state: 'visible' });
  if ((await chat.locator('#transcript > details.tool:not(.agent-card)').count()) > 0) {
    throw new Error('a sub-agent\'s tool call is in the parent\'s stream');
  }
  await page.mouse.move(5, 5);
  await shot(page, 'vscode-subagents.png', shots);
  log('sub-agents: one card with its 3 calls, running, Stop');

  await chat.locator('.msg.assistant', { hasText: SUBAGENT_ANSWER }).waitFor({ state: 'visible' });
  await chatIdle(chat);
  await chat.locator('details.agent-card.agent-completed').waitFor({ state: 'visible' });
  await card.locator('.tool-status', { hasText: /completed · 3 calls · .* in \/ .* out/ }).waitFor({ state: 'visible' });
  if (!(await card.evaluate((d) => d.open))) {
    await card.locator('summary').click();
  }
  await card.locator('button[data-action="agentTranscript"]').click();
  await page.locator('.view-line', { hasText: 'SUBAGENT-TASK' }).first().waitFor({ state: 'visible' });
  await shot(page, 'vscode-subagents-done.png', shots);
  log('sub-agents: completed with its usage; Open transcript shows its conversation in the output');
}

let failed = false;
try {
  await main();
  console.log(`vscode smoke: 1 passed, 0 failed (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
} catch (e) {
  failed = true;
  console.error(`vscode smoke failed: ${e instanceof Error ? e.stack : e}`);
  if (currentPage) {
    await currentPage.screenshot({ path: join(opts.out, 'failure.png') }).catch(() => undefined);
    console.error(`screenshot of the failure: ${join(opts.out, 'failure.png')}`);
  }
  console.log('vscode smoke: 0 passed, 1 failed');
} finally {
  for (const c of cleanups.reverse()) {
    try {
      await c();
    } catch {
      // best effort
    }
  }
}
process.exit(failed ? 1 : 0);
