// Drives `ikigai-tools mcp` with the official MCP TypeScript SDK's default
// stdio client (tests/mcp/ts/run.sh): the tools listed, the six called with
// `--root DIR`, with `--unconfined`, and refused with neither, a client that
// declares roots and answers `[]`
// (what MCP Inspector v2 and the Go SDK's default client send), a client
// with real roots, cancellation and progress. docs/MCP.md says what each
// answer is; each assertion here is exact.
//
//   IKIGAI_TOOLS_BIN=target/debug/ikigai-tools node --test test_mcp.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, existsSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode, ListRootsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

const BIN = process.env.IKIGAI_TOOLS_BIN;
assert.ok(BIN, "set IKIGAI_TOOLS_BIN to the ikigai-tools binary");

/** Long enough for any answer on a loaded machine: a hang fails, it does not stall. */
const PATIENCE = 10_000;

/** The server's default output limit (docs/MCP.md, "Answers sized for the hosts"). */
const DEFAULT_LIMIT = 24_000;

/** What to start the server with, as a refusal says it. */
const START_WITH =
  "start it as `ikigai-tools mcp --root DIR` to confine the tools to DIR, or as " +
  "`ikigai-tools mcp --unconfined` to serve the whole machine on purpose";

/** The refusal when the client's roots are `[]` and there is no `--root`. */
const EMPTY_ROOTS_REFUSAL =
  "PERMISSION_DENIED: Permission denied: the MCP client's list of roots is empty and the server " +
  `was started without --root, so no call runs: ${START_WITH}, or add a root in the client`;

/** The refusal when there are no roots at all, nor `--unconfined`. */
const NO_ROOTS_REFUSAL =
  "PERMISSION_DENIED: Permission denied: the MCP server was started without --root and the " +
  `client names no roots, so no call runs: ${START_WITH}`;

/** A work directory (`work/`) and a directory beside it holding a secret (`outside/`). */
function dirs() {
  const top = realpathSync(mkdtempSync(join(tmpdir(), "ikigai-mcp-ts-")));
  const work = join(top, "work");
  const outside = join(top, "outside");
  mkdirSync(work);
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), "secret\n");
  return { top, work, outside, done: () => rmSync(top, { recursive: true, force: true }) };
}

/**
 * The SDK's default client on stdio, connected to `ikigai-tools mcp ARGS`
 * started in `cwd` (`--unconfined` unless said). `roots`: `null` for a
 * client without the capability, else the directories it answers
 * `roots/list` with (`[]` included).
 */
async function connect({ args = ["--unconfined"], roots = null, cwd }) {
  const capabilities = roots === null ? {} : { roots: { listChanged: true } };
  const client = new Client({ name: "ikigai-ts-tests", version: "0" }, { capabilities });
  if (roots !== null) {
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: roots.map((dir) => ({ uri: pathToFileURL(dir).href, name: dir })),
    }));
  }
  const transport = new StdioClientTransport({ command: BIN, args: ["mcp", ...args], cwd, stderr: "ignore" });
  await client.connect(transport);
  return client;
}

function call(client, name, args, options = {}) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: PATIENCE, ...options });
}

const sha256 = (text) => createHash("sha256").update(text).digest("hex");

/** The text a model reads: the output, then each other field on a line. */
function rendered(answer) {
  const lines = "output" in answer ? [answer.output] : [];
  for (const [key, value] of Object.entries(answer)) {
    if (key !== "output") lines.push(`${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`);
  }
  return lines.join("\n");
}

/** A small answer: the object as structuredContent, its rendering as the text. */
function success(answer) {
  return { content: [{ type: "text", text: rendered(answer) }], structuredContent: answer, isError: false };
}

function failure(code, message) {
  return {
    content: [{ type: "text", text: `${code}: ${message}` }],
    structuredContent: { error: message, error_code: code },
    isError: true,
  };
}

/** The six tools, called in `work` (the server's working directory), each answer exact. */
async function callsTheSix(client, work) {
  const file = join(work, "a.txt");
  const before = sha256("one\ntwo\n");
  const after = sha256("one\nthree\n");
  assert.deepEqual(
    await call(client, "file_write", { file_path: file, content: "one\ntwo\n" }),
    success({ output: "Wrote 8 bytes to a.txt", bytes: 8, sha256: before }),
  );
  assert.deepEqual(
    await call(client, "file_read", { file_path: file }),
    success({ output: "one\ntwo\n", total_lines: 2, sha256: before }),
  );
  assert.deepEqual(
    await call(client, "file_edit", { file_path: file, old_string: "two", new_string: "three" }),
    success({
      output: "Replaced 1 occurrence in a.txt",
      replacements: 1,
      diff: `--- a${file}\n+++ b${file}\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n`,
      sha256: after,
    }),
  );
  assert.deepEqual(await call(client, "glob", { pattern: "*.txt", path: work }), success({ output: file, count: 1 }));
  assert.deepEqual(
    await call(client, "grep", { pattern: "thr", path: work }),
    success({ output: `${file}:2: three`, count: 1, files_searched: 1, files_skipped: 0 }),
  );
  assert.deepEqual(
    await call(client, "bash", { command: "pwd; cat a.txt" }),
    success({ output: `${work}\none\nthree`, exit_code: 0 }),
  );
}

/**
 * Confined to `work`: nothing outside is read or written, by any tool; a
 * refusal names what set the roots (`setBy`).
 */
async function confinedTo(client, work, outside, setBy) {
  const secret = join(outside, "secret.txt");
  const denied = (path) => `Permission denied: ${path} is outside the allowed roots (${work}); ${setBy}`;
  assert.deepEqual(await call(client, "file_read", { file_path: secret }), failure("PERMISSION_DENIED", denied(secret)));
  const planted = join(outside, "planted.txt");
  assert.deepEqual(
    await call(client, "file_write", { file_path: planted, content: "x" }),
    failure("PERMISSION_DENIED", denied(planted)),
  );
  const touched = await call(client, "bash", { command: `touch ${join(outside, "touched")}` });
  assert.equal(touched.structuredContent.exit_code, 1);
  assert.equal(existsSync(planted) || existsSync(join(outside, "touched")), false);
}

test("lists the tools, each declaring the largest result", async () => {
  const { work, done } = dirs();
  const client = await connect({ cwd: work });
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ["bash", "file_read", "file_write", "file_edit", "glob", "grep", "job_output", "job_kill", "job_list", "job_write", "list_allowed_directories", "apply_patch", "web_fetch", "web_search"],
    );
    for (const tool of tools) {
      assert.deepEqual(tool._meta, { "anthropic/maxResultSizeChars": DEFAULT_LIMIT }, tool.name);
    }
  } finally {
    await client.close();
    done();
  }
});

test("a large output comes as text alone, head, marker and tail within the declared size", async () => {
  const { work, done } = dirs();
  const client = await connect({ cwd: work });
  try {
    const command = "echo HEAD; head -c 1000000 /dev/zero | tr '\\0' x; echo; echo TAIL";
    const result = await call(client, "bash", { command });
    assert.deepEqual(Object.keys(result).sort(), ["content", "isError"]);
    assert.equal(result.isError, false);
    assert.equal(result.content.length, 1);
    const text = result.content[0].text;
    assert.ok(text.length <= DEFAULT_LIMIT, `${text.length}`);
    // One line of a million x: cut inside it, and said so.
    const match = /^HEAD\n(x+)\n\[\.\.\. (\d+) bytes omitted \(cut inside line 2\), not kept: run the command again [^\n]* \.\.\.\]\n(x+)\nTAIL\nexit_code: 0$/.exec(text);
    assert.ok(match, text.slice(0, 100));
    // What was kept and what was left out make the whole output.
    assert.equal(5 + match[1].length + Number(match[2]) + match[3].length + 5, 5 + 1_000_000 + 5);
  } finally {
    await client.close();
    done();
  }
});

test("--unconfined without client roots: the six run unconfined", async () => {
  const { work, outside, done } = dirs();
  const client = await connect({ cwd: work });
  try {
    await callsTheSix(client, work);
    assert.deepEqual(
      await call(client, "file_read", { file_path: join(outside, "secret.txt") }),
      success({ output: "secret\n", total_lines: 1, sha256: sha256("secret\n") }),
    );
  } finally {
    await client.close();
    done();
  }
});

test("with --root: the six run confined to it", async () => {
  const { work, outside, done } = dirs();
  const client = await connect({ args: ["--root", work], cwd: work });
  try {
    await callsTheSix(client, work);
    await confinedTo(client, work, outside, "the MCP server's --root sets them");
  } finally {
    await client.close();
    done();
  }
});

test("client roots [] (Inspector v2, the Go SDK) with --root: the six run confined to --root", async () => {
  const { work, outside, done } = dirs();
  const client = await connect({ args: ["--root", work], roots: [], cwd: work });
  try {
    await callsTheSix(client, work);
    await confinedTo(client, work, outside, "the MCP server's --root sets them");
  } finally {
    await client.close();
    done();
  }
});

/** Each of the six refused with `refusal`; nothing written. */
async function allRefused(client, work, refusal) {
  const calls = [
    ["bash", { command: "echo hi > a.txt" }],
    ["file_read", { file_path: join(work, "a.txt") }],
    ["file_write", { file_path: join(work, "a.txt"), content: "x" }],
    ["file_edit", { file_path: join(work, "a.txt"), old_string: "x", new_string: "y" }],
    ["glob", { pattern: "*" }],
    ["grep", { pattern: "x" }],
  ];
  for (const [name, args] of calls) {
    const result = await call(client, name, args);
    assert.deepEqual(result.isError, true, name);
    assert.deepEqual(result.content, [{ type: "text", text: refusal }], name);
  }
  assert.equal(existsSync(join(work, "a.txt")), false);
}

test("neither --root nor --unconfined, without client roots: every call refused, naming both", async () => {
  const { work, done } = dirs();
  const client = await connect({ args: [], cwd: work });
  try {
    await allRefused(client, work, NO_ROOTS_REFUSAL);
  } finally {
    await client.close();
    done();
  }
});

test("client roots outside the --root ceiling: every call refused, saying which", async () => {
  const { work, outside, done } = dirs();
  const client = await connect({ args: ["--root", work], roots: [outside], cwd: work });
  try {
    const refusal =
      "PERMISSION_DENIED: Permission denied: the MCP client's roots " +
      `(${pathToFileURL(outside).href}) are not within the directories the server was started ` +
      `with (--root ${work}), which bound them, so no call runs: name one of those directories, ` +
      "or one beneath it, as the client's root, or start the server with a --root that holds " +
      "the client's roots";
    await allRefused(client, work, refusal);
  } finally {
    await client.close();
    done();
  }
});

test("client roots [] without --root: every call refused, saying to pass --root", async () => {
  const { work, done } = dirs();
  const client = await connect({ args: [], roots: [], cwd: work });
  try {
    await allRefused(client, work, EMPTY_ROOTS_REFUSAL);
  } finally {
    await client.close();
    done();
  }
});

test("client with real roots: the six run confined to them", async () => {
  const { top, work, outside, done } = dirs();
  // The client's roots narrow the command line's (a ceiling): `outside` is
  // beneath --root, not beneath the client's root.
  const client = await connect({ args: ["--root", top], roots: [work], cwd: work });
  try {
    await callsTheSix(client, work);
    await confinedTo(client, work, outside, "the MCP client's roots set them");
  } finally {
    await client.close();
    done();
  }
});

/** Whether `pid` still runs (a zombie does not). */
function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] !== "Z";
  } catch {
    return false;
  }
}

async function until(what, check) {
  const deadline = Date.now() + PATIENCE;
  while (!check()) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test("cancellation kills the call's processes and the server goes on", async () => {
  const { work, done } = dirs();
  const client = await connect({ cwd: work });
  try {
    const pidfile = join(work, "pids");
    const command = `sleep 30 & echo $! > ${pidfile}.tmp; echo $$ >> ${pidfile}.tmp; mv ${pidfile}.tmp ${pidfile}; wait`;
    const controller = new AbortController();
    const running = call(client, "bash", { command }, { signal: controller.signal });
    await until("the command to start", () => existsSync(pidfile));
    const pids = readFileSync(pidfile, "utf8").trim().split("\n").map(Number);
    assert.equal(pids.length, 2);
    const reason = new Error("cancelled by the test");
    controller.abort(reason);
    // The SDK sends notifications/cancelled and rejects with the reason.
    await assert.rejects(running, (e) => e instanceof McpError && e.code === ErrorCode.RequestTimeout
      && e.message === "MCP error -32001: Error: cancelled by the test");
    await until("the command's processes to end", () => pids.every((pid) => !alive(pid)));
    assert.deepEqual(await call(client, "bash", { command: "echo next" }), success({ output: "next", exit_code: 0 }));
  } finally {
    await client.close();
    done();
  }
});

test("a long call reports progress, then answers", async () => {
  const { work, done } = dirs();
  const client = await connect({ cwd: work });
  try {
    const seen = [];
    const result = await call(client, "bash", { command: "sleep 2.5; echo done" }, { onprogress: (p) => seen.push(p) });
    assert.deepEqual(result, success({ output: "done", exit_code: 0 }));
    assert.ok(seen.length >= 2, JSON.stringify(seen));
    for (const [i, p] of seen.entries()) {
      assert.deepEqual(Object.keys(p).sort(), ["message", "progress"]);
      assert.equal(p.message, `running for ${p.progress.toFixed(0)} s`);
      if (i > 0) assert.ok(p.progress > seen[i - 1].progress, JSON.stringify(seen));
    }
  } finally {
    await client.close();
    done();
  }
});
