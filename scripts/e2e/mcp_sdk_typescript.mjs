// fsview-mcp driven by the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk from npm).
//
// Run by scripts/e2e-mcp with Node:
//
//     MCP_TS_SDK=DIR/node_modules/@modelcontextprotocol/sdk node scripts/e2e/mcp_sdk_typescript.mjs
//
// The same scenarios, with the same expectations, as mcp_sdk_python.py;
// each prints one JSON line on stdout: {"scenario", "what", "failures"}.
// The fsview binaries come from $FSVIEW_BIN_DIR.

import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const SDK = process.env.MCP_TS_SDK;
const BIN = process.env.FSVIEW_BIN_DIR;
const load = (rel) => import(pathToFileURL(path.join(SDK, 'dist', 'esm', rel)).href);
const { Client } = await load('client/index.js');
const { StdioClientTransport } = await load('client/stdio.js');
const { McpError } = await load('types.js');

const READ_NOT = 'File has not been read yet. Read it first before writing to it.';
// A `modified` refusal whose whole change the same result tells.
const MODIFIED = 'File has been modified since read, either by the user or by a linter. '
  + 'The whole change is below: you now hold the file\'s new text, so retry your change against it '
  + '(no need to read the file again).';

class Work {
  constructor() {
    this.root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'fsview-e2e-mcp-ts-')));
    this.work = path.join(this.root, 'work');
    this.home = path.join(this.root, 'home');
    this.session = path.join(this.root, 'session.db');
    fs.mkdirSync(this.work);
    fs.mkdirSync(this.home);
  }

  path(rel) { return path.join(this.work, rel); }

  write(rel, text) {
    fs.mkdirSync(path.dirname(this.path(rel)), { recursive: true });
    fs.writeFileSync(this.path(rel), text);
  }

  read(rel) { return fs.readFileSync(this.path(rel), 'utf8'); }

  env() { return { FSVIEW_SESSION: this.session, HOME: this.home, LC_ALL: 'C', TZ: 'UTC' }; }

  fsview(tool, ...args) {
    const r = spawnSync(path.join(BIN, tool), args, {
      cwd: this.work, env: { PATH: '/usr/local/bin:/usr/bin:/bin', ...this.env() }, encoding: 'utf8',
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  async server(sid, ...extra) {
    const transport = new StdioClientTransport({
      command: path.join(BIN, 'fsview-mcp'), args: ['--sid', sid, '-q', ...extra],
      cwd: this.work, env: this.env(), stderr: 'inherit',
    });
    // The SDK hands the negotiated version to a transport that takes it.
    transport.setProtocolVersion = (v) => { transport.protocolVersion = v; };
    const client = new Client({ name: 'fsview-e2e', version: '0' });
    await client.connect(transport);
    return client;
  }

  views(sid) {
    const r = this.fsview('fsview-session', 'show', '--sid', sid, '--json');
    if (r.code !== 0) return [];
    return r.stdout.split('\n').filter(Boolean).map(JSON.parse).map((v) => [v.path, v.kind, v.source]).sort();
  }

  close() { fs.rmSync(this.root, { recursive: true, force: true }); }
}

class Checks {
  constructor() { this.failures = []; }

  eq(got, want, what) {
    const g = JSON.stringify(got);
    const w = JSON.stringify(want);
    if (g !== w) this.failures.push(`${what}: got ${g}, want ${w}`);
  }

  true(cond, what) { if (!cond) this.failures.push(what); }
}

const texts = (r) => r.content.map((b) => b.text);
const call = (client, name, args) => client.callTool({ name, arguments: args });

async function toolsListed(w, c) {
  const client = await w.server('s');
  const info = client.getServerVersion();
  c.eq([info.name, info.version], ['fsview-mcp', '0.1.0'], 'serverInfo');
  const { tools } = await client.listTools();
  c.eq(tools.map((t) => t.name), ['read', 'edit', 'write', 'changed', 'context'], 'tool names');
  const req = Object.fromEntries(tools.map((t) => [t.name, t.inputSchema.required ?? []]));
  c.eq(req, {
    read: ['file_path'], edit: ['file_path', 'old_string', 'new_string'],
    write: ['file_path', 'content'], changed: [], context: [],
  }, 'required arguments');
  c.true(tools.every((t) => t.inputSchema.additionalProperties === false), 'closed schemas');
  c.true(tools.every((t) => (t.description ?? '').length > 200), 'every tool described');
  const version = client.transport.protocolVersion;
  await client.close();
  return `protocol ${version}; 5 tools; serverInfo ${info.name} ${info.version}`;
}

async function readTool(w, c) {
  w.write('a.txt', 'one\ntwo\nthree\n');
  fs.mkdirSync(w.path('dir'));
  const client = await w.server('s');
  let r = await call(client, 'read', { file_path: w.path('a.txt') });
  c.eq([texts(r), r.isError], [['1\tone\n2\ttwo\n3\tthree\n'], false], 'read a.txt');
  c.eq(r._meta['fsview/read'].kind, 'full', 'kind');
  r = await call(client, 'read', { file_path: 'a.txt', offset: 2, limit: 1 });
  c.eq(texts(r), ['2\ttwo\n'], 'read a range');
  r = await call(client, 'read', { file_path: 'dir' });
  c.eq([texts(r), r.isError], [['dir is a directory; read shows regular files only'], true], 'read a directory');
  r = await call(client, 'read', { file_path: 'a.txt', limit: 0 });
  c.eq([texts(r), r.isError], [['read: limit must be a whole number, 1 or more, not 0'], true], 'read with limit 0');
  await client.close();
  const check = w.fsview('fsview-check-edit', '--sid', 's', 'a.txt');
  c.eq([check.code, check.stdout], [0, 'a.txt: ok\n'], 'the shell sees the view');
  return "numbered text; a directory and limit 0 refused (isError); the shell's check: ok";
}

async function editTool(w, c) {
  w.write('a.txt', 'one\ntwo\nthree\n');
  const client = await w.server('s');
  const args = { file_path: 'a.txt', old_string: 'two', new_string: 'TWO' };
  let r = await call(client, 'edit', args);
  c.eq([texts(r), r.isError], [[`a.txt: not_read: ${READ_NOT}`], true], 'edit before a read');
  await call(client, 'read', { file_path: 'a.txt' });
  r = await call(client, 'edit', args);
  c.eq([texts(r), r.isError], [['The file a.txt has been updated successfully.\n\n--- a.txt\n+++ a.txt\n'
    + '@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n'], false], 'edit after a read');
  r = await call(client, 'edit', { file_path: 'a.txt', old_string: 'e', new_string: 'E' });
  c.eq(r._meta['fsview/edit'].verdict, 'ambiguous', 'an ambiguous edit');
  await client.close();
  c.eq(w.read('a.txt'), 'one\nTWO\nthree\n', 'the file');
  return 'not_read refused (isError), applied after a read with the diff, ambiguous refused';
}

async function writeTool(w, c) {
  w.write('a.txt', '1\n2\n3\n');
  const client = await w.server('s');
  await call(client, 'read', { file_path: 'a.txt', limit: 2 });
  let r = await call(client, 'write', { file_path: 'a.txt', content: 'x\n' });
  c.eq([texts(r), r.isError], [['a.txt: start_only: File has only been read in part (lines 1-2 of 3). '
    + 'Read the whole file before writing all of it.'], true], 'write after a partial read');
  await call(client, 'read', { file_path: 'a.txt' });
  r = await call(client, 'write', { file_path: 'a.txt', content: 'x\n' });
  c.eq(r.isError, false, 'write after a full read');
  r = await call(client, 'write', { file_path: 'new/b.txt', content: 'b\n' });
  c.eq(texts(r), ['File created successfully at: new/b.txt\n\n--- /dev/null\n+++ new/b.txt\n@@ -0,0 +1 @@\n+b\n'],
    'a new file');
  await client.close();
  c.eq([w.read('a.txt'), w.read('new/b.txt')], ['x\n', 'b\n'], 'the files');
  return 'start_only refused (isError); written after a full read; a new file needs no read';
}

async function changedAndContext(w, c) {
  w.write('CLAUDE.md', 'Run the tests first.\n');
  w.write('a.txt', 'a\n');
  const client = await w.server('s');
  let r = await call(client, 'changed', {});
  c.eq(texts(r), ['No file you have seen has changed since you saw it.\n'], 'nothing changed');
  r = await call(client, 'changed', { all: true });
  c.eq([texts(r), r.isError], [['changed: unknown argument "all"; it takes no arguments'], true],
    'changed with an argument');
  r = await call(client, 'context', {});
  c.true(!r.isError && texts(r)[0].includes('Run the tests first.'), `context has CLAUDE.md: ${texts(r)}`);
  r = await call(client, 'context', { for_path: 5 });
  c.eq([texts(r), r.isError], [['context: for_path must be a string, not a number'], true], 'context with a number');
  await call(client, 'read', { file_path: 'a.txt' });
  w.write('a.txt', 'b\n');
  r = await call(client, 'changed', {});
  const a = w.path('a.txt');
  c.eq(texts(r), [`These files changed since you last saw them:\n\n${a}: modified (content)\n`
    + `--- ${a} (as viewed)\n+++ ${a} (now)\n@@ -1 +1 @@\n-a\n+b\n`], 'a change listed');
  await client.close();
  return 'changed: none, then the diff; context: CLAUDE.md; bad arguments refused (isError)';
}

async function changeBetweenReadAndEdit(w, c) {
  w.write('a.txt', 'alpha\nbeta\n');
  const client = await w.server('s');
  await call(client, 'read', { file_path: 'a.txt' });
  // Another process changes the file: same size, the old mtime put back.
  execFileSync('sh', ['-c', 't=$(stat -c %y a.txt); printf \'alpha\\nBETA\\n\' > a.txt; touch -d "$t" a.txt'],
    { cwd: w.work });
  let r = await call(client, 'edit', { file_path: 'a.txt', old_string: 'alpha', new_string: 'A' });
  const a = w.path('a.txt');
  c.eq([texts(r), r.isError], [[`a.txt: modified (content): ${MODIFIED}`,
    `These files changed since you last saw them:\n\n${a}: modified (content)\n--- ${a} (as viewed)\n`
    + `+++ ${a} (now)\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA\n`], true], 'the stale edit');
  c.eq(w.read('a.txt'), 'alpha\nBETA\n', 'nothing overwritten');
  await call(client, 'read', { file_path: 'a.txt' });
  r = await call(client, 'edit', { file_path: 'a.txt', old_string: 'alpha', new_string: 'A' });
  c.eq(r.isError, false, 'the edit after a new read');
  await client.close();
  c.eq(w.read('a.txt'), 'A\nBETA\n', 'the file');
  return 'refused as modified (content), with the diff as news; applied after a new read';
}

const notes = () => Array.from({ length: 12 }, (_, i) => `line ${i + 1} of notes\n`).join('');

async function formatterRace(w, c) {
  w.write('notes.txt', notes());
  const formatted = notes().replace('line 1 of notes\n', 'LINE 1 OF NOTES (formatted)\n');
  const client = await w.server('s');
  await call(client, 'read', { file_path: 'notes.txt' });
  w.write('notes.txt', formatted);
  let r = await call(client, 'edit', { file_path: 'notes.txt', old_string: 'line 10 of notes', new_string: 'LINE 10' });
  const other = '--- notes.txt\n+++ notes.txt\n@@ -1,4 +1,4 @@\n-line 1 of notes\n+LINE 1 OF NOTES (formatted)\n'
    + ' line 2 of notes\n line 3 of notes\n line 4 of notes\n';
  const mine = '--- notes.txt\n+++ notes.txt\n@@ -7,6 +7,6 @@\n line 7 of notes\n line 8 of notes\n'
    + ' line 9 of notes\n-line 10 of notes\n+LINE 10\n line 11 of notes\n line 12 of notes\n';
  c.eq([texts(r), r.isError ?? false], [['The file notes.txt has been updated successfully. notes.txt had been changed '
    + 'since you read it (by the user or another program); that change is kept and your edit was made beside it. '
    + `You now hold the file with both; the other change:\n\n${other}\n\n${mine}`], false], 'the edit of line 10');
  c.eq(r._meta['fsview/edit'].verdict, 'merged', 'its verdict');
  const both = formatted.replace('line 10 of notes', 'LINE 10');
  c.eq(w.read('notes.txt'), both, 'both changes kept');
  const near = both.replace('line 2 of notes\n', 'line 2  of  notes\n');
  w.write('notes.txt', near);
  r = await call(client, 'edit', { file_path: 'notes.txt', old_string: 'line 3 of notes', new_string: 'LINE 3' });
  const a = w.path('notes.txt');
  c.eq([texts(r), r.isError], [[`notes.txt: modified (content): ${MODIFIED}`,
    `These files changed since you last saw them:\n\n${a}: modified (content)\n--- ${a} (as viewed)\n`
    + `+++ ${a} (now)\n@@ -1,10 +1,10 @@\n LINE 1 OF NOTES (formatted)\n-line 2 of notes\n+line 2  of  notes\n`
    + ' line 3 of notes\n line 4 of notes\n line 5 of notes\n line 6 of notes\n line 7 of notes\n'
    + ' line 8 of notes\n line 9 of notes\n LINE 10\n'], true], 'the edit of line 3, next to the change');
  c.eq(w.read('notes.txt'), near, 'nothing overwritten');
  r = await call(client, 'edit', { file_path: 'notes.txt', old_string: 'line 3 of notes', new_string: 'LINE 3' });
  c.eq(r.isError ?? false, false, 'the retry against the text told');
  await client.close();
  c.eq(w.read('notes.txt'), near.replace('line 3 of notes', 'LINE 3'), 'the file');
  return 'far: merged, the change told with the result; near: refused with the change, the retry applied';
}

async function rangeRace(w, c) {
  const text = Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`).join('');
  w.write('long.txt', text);
  const theirs = '#!/bin/sh\n' + text.replace('line 12\n', 'line 12 formatted\n');
  const client = await w.server('s');
  await call(client, 'read', { file_path: 'long.txt', offset: 10, limit: 11 });
  w.write('long.txt', theirs);
  let r = await call(client, 'edit', { file_path: 'long.txt', old_string: 'line 17\n', new_string: 'LINE 17\n' });
  const other = '--- long.txt\n+++ long.txt\n@@ -10,7 +10,7 @@\n line 9\n line 10\n line 11\n-line 12\n'
    + '+line 12 formatted\n line 13\n line 14\n line 15\n';
  const mine = '--- long.txt\n+++ long.txt\n@@ -15,7 +15,7 @@\n line 14\n line 15\n line 16\n-line 17\n+LINE 17\n'
    + ' line 18\n line 19\n line 20\n';
  c.eq([texts(r), r.isError ?? false], [['The file long.txt has been updated successfully. long.txt had been changed '
    + 'since you read lines 10-20 (by the user or another program); that change is kept and your edit was made beside '
    + `it. Those lines are 11-21 now, and you hold them with both; what changed in them:\n\n${other}\n\n${mine}`], false],
  'the edit of line 17');
  c.eq(r._meta['fsview/edit'].merged.lines, { seen: [10, 20], now: [11, 21] }, 'the lines');
  c.eq(w.read('long.txt'), theirs.replace('line 17\n', 'LINE 17\n'), 'both changes kept');
  r = await call(client, 'write', { file_path: 'long.txt', content: 'x\n' });
  c.eq([texts(r), r.isError], [['long.txt: start_only: File has only been read in part (line 18 of 41). Read the '
    + 'whole file before writing all of it.'], true], 'a whole-file write after');
  await client.close();
  return 'merged, what became of the lines read told with the result; a whole write then refused';
}

async function malformed(w, c) {
  w.write('a.txt', 'a\n');
  const client = await w.server('s');
  try {
    await call(client, 'Read', { file_path: 'a.txt' });
    c.true(false, 'an unknown tool raised no error');
  } catch (e) {
    c.true(e instanceof McpError, `an McpError: ${e}`);
    c.eq([e.code, e.message],
      [-32602, 'MCP error -32602: unknown tool "Read"; the tools are read, edit, write, changed and context'],
      'an unknown tool');
  }
  let r = await call(client, 'read', { file_path: 7 });
  c.eq([texts(r), r.isError], [['read: file_path must be a string, not a number'], true], 'a number for a path');
  r = await call(client, 'edit', { file_path: 'a.txt' });
  c.eq([texts(r), r.isError], [['edit: old_string is required (a string)'], true], 'missing arguments');
  try {
    await client.request({ method: 'no/such/method', params: {} }, (await load('types.js')).EmptyResultSchema);
    c.true(false, 'an unknown method raised no error');
  } catch (e) {
    c.eq(e.code, -32601, 'an unknown method');
  }
  r = await call(client, 'read', { file_path: 'a.txt' });
  c.eq(texts(r), ['1\ta\n'], 'still serving');
  await client.close();
  return 'unknown tool: -32602, unknown method: -32601 (protocol errors); bad arguments: isError; still serving';
}

async function disconnectMidCall(w, c) {
  let big = '';
  for (let i = 0; i < 400000; i++) big += `line ${i} of a big file\n`;
  w.write('big.txt', big);
  w.write('small.txt', 's\n');
  const client = await w.server('s', '--cap', '64M');
  await call(client, 'read', { file_path: 'small.txt' });
  const abort = new AbortController();
  const pending = client.callTool({ name: 'read', arguments: { file_path: 'big.txt' } }, undefined,
    { signal: abort.signal }).then(() => 'the big read finished before the client left', () => 'aborted after 50 ms, then left');
  await new Promise((r) => setTimeout(r, 50));
  abort.abort('the user gave up');
  const outcome = await pending;
  await client.close();
  c.eq(w.views('s'), [['small.txt', 'full', 'read']], 'views after the disconnect');
  const chk = w.fsview('fsview-check-edit', '--sid', 's', 'big.txt');
  c.eq(chk.code, 1, 'big.txt not read');
  const lst = w.fsview('fsview-session', 'list');
  c.eq(lst.code, 0, `the session file is usable: ${lst.stderr}`);
  const again = await w.server('s');
  const r = await call(again, 'read', { file_path: 'small.txt' });
  c.eq(r._meta['fsview/read'].unchanged, true, 'a new server on the session');
  await again.close();
  return `${outcome}; no view of big.txt; the session file fine`;
}

async function eightClients(w, c) {
  w.write('shared.txt', 'version 1\n');
  for (let i = 0; i < 8; i++) w.write(`own${i}.txt`, `file ${i}\n`);
  const clients = await Promise.all([...Array(8).keys()].map((i) => w.server(`crew-${i}`)));
  await Promise.all(clients.map(async (cl, i) => {
    await call(cl, 'read', { file_path: 'shared.txt' });
    await call(cl, 'read', { file_path: `own${i}.txt` });
  }));
  const results = await Promise.all(clients.map((cl, i) => Promise.all([
    call(cl, 'edit', { file_path: `own${i}.txt`, old_string: 'file', new_string: 'edited' }),
    call(cl, 'edit', { file_path: 'shared.txt', old_string: 'version 1', new_string: `version by ${i}` }),
  ])));
  await Promise.all(clients.map((cl) => cl.close()));
  const winners = results.map(([, s], i) => (s.isError ? -1 : i)).filter((i) => i >= 0);
  c.eq(winners.length, 1, 'one shared edit lands');
  // A loser already told of the winner's change (issue 25) finds its old text gone.
  const lost = results.filter(([, s]) => s.isError).map(([, s]) => s._meta['fsview/edit'].verdict);
  c.true(lost.length === 7 && lost.every((v) => v === 'modified' || v === 'not_found'),
    `the others are refused as modified (or not_found once told): ${lost}`);
  c.true(results.every(([o]) => !o.isError), 'every own edit lands');
  if (winners.length) c.eq(w.read('shared.txt'), `version by ${winners[0]}\n`, 'the shared file');
  for (let i = 0; i < 8; i++) {
    c.eq(w.read(`own${i}.txt`), `edited ${i}\n`, `own${i}.txt`);
    const ev = w.fsview('fsview-session', 'events', '--sid', `crew-${i}`, '--json');
    const actions = ev.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l).action);
    const count = (a) => actions.filter((x) => x === a).length;
    c.eq([count('read'), count('edit')], [2, 2], `crew-${i}'s reads and edits logged`);
    if (!winners.includes(i)) c.true(count('remind') + count('told') >= 1, `crew-${i} told of the change: ${actions}`);
  }
  return '8 servers at once: own edits all land; shared: 1 lands, 7 modified and told; every event logged';
}

const SCENARIOS = [
  ['tools listed', toolsListed],
  ['read', readTool],
  ['edit', editTool],
  ['write', writeTool],
  ['changed, context', changedAndContext],
  ['change between read and edit', changeBetweenReadAndEdit],
  ['formatter race, far and near', formatterRace],
  ['formatter race after a range read', rangeRace],
  ['malformed requests', malformed],
  ['client gone mid-call', disconnectMidCall],
  ['8 clients, one session file', eightClients],
];

const only = process.argv.slice(2);
for (const [name, fn] of SCENARIOS) {
  if (only.length && !only.some((o) => name.includes(o))) continue;
  const w = new Work();
  const c = new Checks();
  let what = '';
  try {
    what = await Promise.race([fn(w, c), new Promise((_, rej) => setTimeout(() => rej(new Error('timed out')), 120000).unref())]);
  } catch (e) {
    c.failures.push(`${e.name}: ${e.stack ?? e}`.slice(0, 1500));
  } finally {
    w.close();
  }
  console.log(JSON.stringify({ scenario: name, what, failures: c.failures }));
}
