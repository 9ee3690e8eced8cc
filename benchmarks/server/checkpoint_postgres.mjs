// The LangGraph JS half of the checkpoint comparison: it drives
// @langchain/langgraph-checkpoint-postgres (PostgresSaver) against the same
// PostgreSQL server that our own checkpoint store is measured on, and prints
// one JSON line on stdout for the C++ benchmark that spawns it with `node`
// from BUILD_DIR/benchmarks/server-js (checkpointer_bench,
// benchmarks/checkpointer.cpp; installed by install.sh).
//
//   node checkpoint_postgres.mjs save URI MESSAGES SAVES [RESTART]
//     A fresh thread whose messages channel already holds MESSAGES messages
//     (written by one put that is not timed), then timed puts, each one a
//     graph step that appended a single message; after every RESTART timed
//     puts (default 64, 0 for never) a new thread of MESSAGES messages is
//     started the same way, so the history stays near the size named, as in
//     checkpointer_bench's own BM_save. SAVES timed puts in all. Prints
//     {"us_per_save": mean microseconds per timed put, "messages": ..., "saves": ...}
//
//   node checkpoint_postgres.mjs bytes URI ROUNDS
//     One fresh, empty thread; each of the ROUNDS rounds appends a human and
//     an AI message and does one put. Prints
//     {"bytes_per_round": on-disk growth / ROUNDS, "rounds": ...,
//      "us_per_round": mean microseconds per round, "data_bytes_per_round": ...,
//      "stored_bytes_per_round": ...}; see measureTables and measureThreadBytes.
//
// URI is a node-postgres connection string; a Unix socket directory goes in
// the host parameter: postgresql://agentware@/benchdb?host=/tmp/agentware-pg-XXXX
// Any failure: a message on stderr and exit code 1.
//
// Each put is shaped like the one a LangGraph step makes: the messages channel
// (the add_messages reducer's channel) holds the whole list as its value, its
// version comes from the saver's getNextVersion and is passed in newVersions
// so that PostgresSaver writes the blob, and the parent config is the one
// returned by the previous put.

import { randomUUID } from "node:crypto";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { uuid6 } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";

const FILLER =
  "The quick brown fox jumps over the lazy dog while the benchmark keeps " +
  "counting every byte and every microsecond of it. ";

// About 100 characters of text, different for every message.
function messageText(index) {
  const head = `message ${index}: `;
  return head + FILLER.slice(0, 100 - head.length);
}

// Human messages at even indexes, AI messages at odd ones, each with an id
// as a real conversation's messages have.
function makeMessage(index) {
  const fields = { content: messageText(index), id: randomUUID() };
  return index % 2 === 0 ? new HumanMessage(fields) : new AIMessage(fields);
}

function nonNegativeInt(text, name) {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(text)}`);
  }
  return value;
}

// One thread and the state a graph would carry between its steps.
class Thread {
  constructor(saver) {
    this.saver = saver;
    this.config = { configurable: { thread_id: randomUUID(), checkpoint_ns: "" } };
    this.messages = [];
    this.version = undefined;
    this.step = 0;
  }

  get threadId() {
    return this.config.configurable.thread_id;
  }

  // Saves the current message list as a new checkpoint whose parent is the
  // previous one; returns when PostgresSaver has committed it.
  async put() {
    this.version = this.saver.getNextVersion(this.version);
    const checkpoint = {
      v: 4,
      id: uuid6(this.step),
      ts: new Date().toISOString(),
      channel_values: { messages: this.messages },
      channel_versions: { messages: this.version },
      versions_seen: {},
    };
    const metadata = { source: "loop", step: this.step, parents: {} };
    this.config = await this.saver.put(this.config, checkpoint, metadata, {
      messages: this.version,
    });
    this.step += 1;
  }
}

// A new thread holding `messageCount` messages, saved by one put.
async function startThread(saver, messageCount) {
  const thread = new Thread(saver);
  for (let i = 0; i < messageCount; i += 1) thread.messages.push(makeMessage(i));
  await thread.put();
  return thread;
}

async function runSave(saver, messageCount, saves, restartEvery) {
  let thread;
  let sinceStart = 0;
  let totalNs = 0n;
  for (let i = 0; i < saves; i += 1) {
    if (thread === undefined || (restartEvery > 0 && sinceStart === restartEvery)) {
      thread = await startThread(saver, messageCount); // not timed
      sinceStart = 0;
    }
    sinceStart += 1;
    // A new list each step, as the add_messages reducer returns one.
    thread.messages = [...thread.messages, makeMessage(thread.messages.length)];
    const start = process.hrtime.bigint();
    await thread.put();
    totalNs += process.hrtime.bigint() - start;
  }
  const usPerSave = saves > 0 ? Number(totalNs) / 1000 / saves : 0;
  return { us_per_save: usPerSave, messages: messageCount, saves };
}

// What PostgresSaver's three tables take on disk, TOAST and indexes included
// (pg_total_relation_size), after a VACUUM ANALYZE as checkpointer_bench does
// for our own table. The difference before/after a run is what it added, as
// long as nothing else writes to these tables meanwhile (checkpointer_bench
// gives every run a database of its own).
async function measureTables(saver) {
  await saver.pool.query("vacuum analyze checkpoints, checkpoint_blobs, checkpoint_writes");
  const { rows } = await saver.pool.query(
    `select (pg_total_relation_size('checkpoints') +
             pg_total_relation_size('checkpoint_blobs') +
             pg_total_relation_size('checkpoint_writes'))::bigint as bytes`,
  );
  return Number(rows[0].bytes);
}

// Bytes this thread holds in PostgresSaver's three tables, counting only the
// data columns: checkpoints.checkpoint and .metadata (jsonb, counted as the
// octet_length of their text form), checkpoint_blobs.blob and
// checkpoint_writes.blob (bytea, octet_length). Keys, row headers and indexes
// are left out. `stored` is the same columns' pg_column_size, i.e. after
// PostgreSQL's TOAST compression and in jsonb's binary form.
async function measureThreadBytes(saver, threadId) {
  const sql = `
    select coalesce(sum(logical), 0)::bigint as logical,
           coalesce(sum(stored), 0)::bigint as stored
    from (
      select octet_length(checkpoint::text) + octet_length(metadata::text) as logical,
             pg_column_size(checkpoint) + pg_column_size(metadata) as stored
        from checkpoints where thread_id = $1
      union all
      select coalesce(octet_length(blob), 0), coalesce(pg_column_size(blob), 0)
        from checkpoint_blobs where thread_id = $1
      union all
      select octet_length(blob), pg_column_size(blob)
        from checkpoint_writes where thread_id = $1
    ) as per_row`;
  // PostgresSaver keeps its pg.Pool in a field that plain JS can read; using
  // it spares this script a direct dependency on pg.
  const { rows } = await saver.pool.query(sql, [threadId]);
  return { logical: Number(rows[0].logical), stored: Number(rows[0].stored) };
}

async function runBytes(saver, rounds) {
  const before = await measureTables(saver);
  const thread = new Thread(saver);
  const start = process.hrtime.bigint();
  for (let round = 0; round < rounds; round += 1) {
    const next = thread.messages.length;
    thread.messages = [...thread.messages, makeMessage(next), makeMessage(next + 1)];
    await thread.put();
  }
  const elapsedNs = process.hrtime.bigint() - start;
  const onDisk = (await measureTables(saver)) - before;
  const bytes = await measureThreadBytes(saver, thread.threadId);
  const perRound = (value) => (rounds > 0 ? value / rounds : 0);
  return {
    bytes_per_round: perRound(onDisk),
    rounds,
    us_per_round: perRound(Number(elapsedNs) / 1000),
    data_bytes_per_round: perRound(bytes.logical),
    stored_bytes_per_round: perRound(bytes.stored),
  };
}

const USAGE =
  "usage: node checkpoint_postgres.mjs save URI MESSAGES SAVES [RESTART]\n" +
  "       node checkpoint_postgres.mjs bytes URI ROUNDS";

async function main(argv) {
  const [mode, uri, ...rest] = argv;
  let run;
  if (mode === "save" && uri && (rest.length === 2 || rest.length === 3)) {
    const messageCount = nonNegativeInt(rest[0], "MESSAGES");
    const saves = nonNegativeInt(rest[1], "SAVES");
    const restartEvery = rest.length === 3 ? nonNegativeInt(rest[2], "RESTART") : 64;
    run = (saver) => runSave(saver, messageCount, saves, restartEvery);
  } else if (mode === "bytes" && uri && rest.length === 1) {
    const rounds = nonNegativeInt(rest[0], "ROUNDS");
    run = (saver) => runBytes(saver, rounds);
  } else {
    throw new Error(USAGE);
  }

  const saver = PostgresSaver.fromConnString(uri);
  try {
    await saver.setup();
    const result = await run(saver);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await saver.end();
  }
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`checkpoint_postgres.mjs: ${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
