// Drives `agentware serve` with the official LangGraph JS SDK (@langchain/langgraph-sdk,
// pinned in package-lock.json), as a web UI or a deepagents client would, and checks
// what the server does. Run by cmake/server-sdk-test.sh:
//
//   node js_client.mjs URL [main | restart-1 | restart-2 THREAD_ID]
//
// URL may come from AGENTWARE_SERVER_URL instead. AGENTWARE_SERVER_TOKEN, when set,
// is sent as a bearer token. The first failure ends the run with exit status 1
// (AGENTWARE_SDK_KEEP_GOING=1 runs every scenario and reports each failure).
//
// The server plays tests/server/sdk/script.json: its answers are taken in order
// across runs, so the runs that call the model come in that order here (the
// ANSWERS below), and python_client.py makes the same runs in the same order.

import { Client } from "@langchain/langgraph-sdk";

const ANSWERS = {
    stream: "Hello from agentware.",
    modes: {
        events: "Answer in events mode.",
        custom: "Answer in custom mode.",
        tasks: "Answer in tasks mode.",
        debug: "Answer in debug mode.",
        messages: "Answer in messages mode.",
        checkpoints: "Answer in checkpoints mode.",
    },
    wait: "Answer of a run waited for.",
    stateless: "Answer of a stateless run.",
    join: "Answer of a joined run.",
    resumable: "Answer of a resumable run.",
    approved: "The note is written.",
    slow: "A slow answer.",
    after_restart: "The note survived the restart.",
};
const ASSISTANT = "lead_agent";
const TIMEOUT_MS = 60_000;

const args = process.argv.slice(2);
const url = (args[0] && /^https?:/.test(args[0]) ? args.shift() : process.env.AGENTWARE_SERVER_URL)?.replace(/\/$/, "");
const phase = args[0] ?? "main";
if (!url) {
    console.error("usage: node js_client.mjs URL [main|restart-1|restart-2 THREAD_ID] (or set AGENTWARE_SERVER_URL)");
    process.exit(2);
}
const token = process.env.AGENTWARE_SERVER_TOKEN;
const authHeaders = token ? { Authorization: `Bearer ${token}` } : {};
const keepGoing = process.env.AGENTWARE_SDK_KEEP_GOING === "1";
// No retries: a failed request shows at once, with the server's answer.
const client = new Client({ apiUrl: url, apiKey: null, defaultHeaders: authHeaders, timeoutMs: TIMEOUT_MS, callerOptions: { maxRetries: 0 } });
const tag = `sdk-js-${Date.now()}`; // this run's threads, for searches

// ---- checks and reporting

class Failure extends Error {}

function show(value) {
    const s = JSON.stringify(value);
    return s !== undefined && s.length > 2000 ? `${s.slice(0, 2000)}…` : s;
}
function describe(e) {
    if (e instanceof Failure) return e.message;
    // The SDK's HTTPError: "HTTP <status>: <the body>".
    if (e?.status) return String(e.message).startsWith("HTTP") ? e.message : `HTTP ${e.status}: ${e.message}`;
    return e?.stack ?? String(e);
}
function check(condition, message, got) {
    if (!condition) throw new Failure(arguments.length > 2 ? `${message}\n    got: ${show(got)}` : message);
}
function equal(actual, expected, what) {
    check(actual === expected, `${what}: expected ${show(expected)}`, actual);
}
// A request through the SDK, named in the failure as the route it sends.
async function call(route, fn) {
    try {
        return await fn();
    } catch (e) {
        throw new Failure(`${route} failed: ${describe(e)}`);
    }
}
// A request that must fail with `status`.
async function refused(route, status, fn) {
    let result;
    try {
        result = await fn();
    } catch (e) {
        check(e?.status === status, `${route}: expected HTTP ${status}, got an error: ${describe(e)}`);
        return e;
    }
    throw new Failure(`${route}: expected HTTP ${status}, got a success: ${show(result)}`);
}
async function collect(route, stream) {
    const events = [];
    try {
        for await (const part of stream) events.push(part);
    } catch (e) {
        throw new Failure(`${route}: the stream failed after ${events.length} events [${names(events)}]: ${describe(e)}`);
    }
    return events;
}
const names = (events) => events.map((e) => e.event).join(" ");
const signal = () => AbortSignal.timeout(TIMEOUT_MS);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let failures = 0;
const failed = [];
async function scenario(name, fn) {
    try {
        await fn();
        console.log(`ok   ${name}`);
    } catch (e) {
        failures += 1;
        failed.push(name);
        console.log(`FAIL ${name}: ${describe(e)}`);
        if (!keepGoing) {
            console.log(`js client (${phase}): failed at "${name}"`);
            process.exit(1);
        }
    }
}

// ---- messages as the server serialises them (LangChain's dicts)

const messagesOf = (values) => (Array.isArray(values?.messages) ? values.messages : []);
const isHuman = (m) => m?.type === "human" || m?.role === "user";
const isAi = (m) => m?.type === "ai" || m?.type === "AIMessageChunk" || m?.role === "assistant";
const isTool = (m) => m?.type === "tool" || m?.role === "tool";
const textOf = (m) =>
    typeof m?.content === "string"
        ? m.content
        : Array.isArray(m?.content)
          ? m.content.map((b) => (typeof b === "string" ? b : (b?.text ?? ""))).join("")
          : "";
const lastAi = (values) => messagesOf(values).filter(isAi).at(-1);
const humanIndex = (values, text) => messagesOf(values).findIndex((m) => isHuman(m) && textOf(m) === text);
const input = (text) => ({ messages: [{ role: "user", content: text }] });

function expectAnswer(values, answer, what) {
    const ai = lastAi(values);
    check(ai !== undefined, `${what}: no ai message in the values`, values);
    equal(textOf(ai), answer, `${what}: the last ai message`);
}
function expectStreamStart(events, route) {
    check(events.length > 0, `${route}: the stream is empty`);
    equal(events[0].event, "metadata", `${route}: the first event`);
    check(typeof events[0].data?.run_id === "string", `${route}: the metadata event has no run_id`, events[0]);
    const error = events.find((e) => e.event === "error");
    check(error === undefined, `${route}: the stream has an error event`, error);
}
async function expectThreadStatus(threadId, status, what) {
    const thread = await call(`GET /threads/${threadId}`, () => client.threads.get(threadId));
    equal(thread.status, status, `${what}: thread status`);
    return thread;
}
// Waits until a background run is running (its scripted answer waits 1.5 s), so that
// a second run finds the thread busy in the middle of the first one's model call.
async function waitRunning(threadId, runId) {
    const until = Date.now() + 10_000;
    for (;;) {
        const run = await call(`GET /threads/${threadId}/runs/${runId}`, () => client.runs.get(threadId, runId));
        if (run.status === "running") break;
        check(
            run.status === "pending",
            `run ${runId} ended (${run.status}) before the test could find it running: does the scripted model honour "delay_ms"?`,
            run,
        );
        check(Date.now() < until, `run ${runId} still pending after 10 s`, run);
        await sleep(25);
    }
    await sleep(300); // into the model call
}

function interruptOf(values) {
    const list = values?.__interrupt__;
    return Array.isArray(list) && list.length > 0 ? list[0] : undefined;
}
// A HumanInTheLoop interrupt for write_file, in LangChain's Python (snake_case) shape.
function expectWriteFileReview(interrupt, what) {
    check(interrupt !== undefined, `${what}: no __interrupt__`);
    check(typeof interrupt.id === "string", `${what}: the interrupt has no id`, interrupt);
    const value = interrupt.value ?? {};
    const action = value.action_requests?.[0];
    check(action !== undefined, `${what}: the interrupt value has no action_requests`, value);
    equal(action.name, "write_file", `${what}: action_requests[0].name`);
    check(typeof action.args === "object" && action.args !== null, `${what}: action_requests[0].args is not an object`, action);
    const review = value.review_configs?.[0];
    check(review !== undefined, `${what}: the interrupt value has no review_configs`, value);
    equal(review.action_name, "write_file", `${what}: review_configs[0].action_name`);
    check(
        Array.isArray(review.allowed_decisions) && review.allowed_decisions.includes("approve"),
        `${what}: review_configs[0].allowed_decisions lacks approve`,
        review,
    );
}
// Streams a run that stops for a review of write_file; returns its events.
async function streamUntilReview(threadId, text, what) {
    const route = `POST /threads/${threadId}/runs/stream`;
    const events = await collect(
        route,
        client.runs.stream(threadId, ASSISTANT, { input: input(text), streamMode: ["values", "updates"], signal: signal() }),
    );
    expectStreamStart(events, `${what}: ${route}`);
    const update = events.find((e) => e.event === "updates" && e.data?.__interrupt__);
    check(update !== undefined, `${what}: no updates event with __interrupt__ [${names(events)}]`, events.at(-1));
    expectWriteFileReview(interruptOf(update.data), `${what}: updates.__interrupt__`);
    const lastValues = events.filter((e) => e.event === "values").at(-1);
    check(
        interruptOf(lastValues?.data) !== undefined,
        `${what}: the last values event has no __interrupt__ (useStream reads it there)`,
        lastValues,
    );
    return events;
}
async function expectParked(threadId, what) {
    const thread = await expectThreadStatus(threadId, "interrupted", what);
    const pending = Object.values(thread.interrupts ?? {}).flat();
    check(pending.length > 0, `${what}: GET /threads/{id} lists no interrupts`, thread.interrupts);
    expectWriteFileReview(pending[0], `${what}: thread.interrupts`);
    const state = await call(`GET /threads/${threadId}/state`, () => client.threads.getState(threadId));
    check(Array.isArray(state.next) && state.next.length > 0, `${what}: state.next is empty while parked`, state.next);
    const inTasks = (state.tasks ?? []).flatMap((t) => t.interrupts ?? []);
    check(inTasks.length > 0 || (state.interrupts ?? []).length > 0, `${what}: the state's tasks carry no interrupts`, state.tasks);
    return { thread, state };
}
// Resumes a parked write_file review with approve; checks the tool ran and the answer came.
async function approve(threadId, toolCallId, answer, what) {
    const route = `POST /threads/${threadId}/runs/stream (command.resume)`;
    const events = await collect(
        route,
        client.runs.stream(threadId, ASSISTANT, {
            command: { resume: { decisions: [{ type: "approve" }] } },
            streamMode: ["values", "updates"],
            signal: signal(),
        }),
    );
    expectStreamStart(events, `${what}: ${route}`);
    const finalValues = events.filter((e) => e.event === "values").at(-1)?.data;
    check(interruptOf(finalValues) === undefined, `${what}: the resumed run stopped again`, finalValues);
    const state = await call(`GET /threads/${threadId}/state`, () => client.threads.getState(threadId));
    const tool = messagesOf(state.values).find((m) => isTool(m) && m.tool_call_id === toolCallId);
    check(tool !== undefined, `${what}: no tool message answers ${toolCallId}`, messagesOf(state.values));
    equal(tool.name, "write_file", `${what}: the tool message's name`);
    check(tool.status !== "error", `${what}: the approved write_file failed`, tool);
    expectAnswer(state.values, answer, what);
    const thread = await expectThreadStatus(threadId, "idle", `${what}: after the resume`);
    check(Object.values(thread.interrupts ?? {}).flat().length === 0, `${what}: interrupts left after the resume`, thread.interrupts);
}

// ---- scenarios of the main phase (in the order of script.json)

async function systemRoutes() {
    const ok = await fetch(`${url}/ok`, { headers: authHeaders });
    equal(ok.status, 200, "GET /ok status");
    const okBody = await ok.json();
    equal(okBody.ok, true, "GET /ok body .ok");
    const info = await fetch(`${url}/info`, { headers: authHeaders });
    equal(info.status, 200, "GET /info status");
    const body = await info.json();
    check(typeof body.flags === "object" && body.flags !== null, "GET /info has no flags object", body);
    check(typeof body.version === "string", "GET /info has no version", body);
    console.log(`     /info: ${show(body)}`);
}

async function assistants() {
    const found = await call("POST /assistants/search", () => client.assistants.search({ graphId: ASSISTANT }));
    check(Array.isArray(found), "assistants.search did not return a list", found);
    const lead = found.find((a) => a.graph_id === ASSISTANT);
    check(lead !== undefined, `assistants.search({graph_id: ${ASSISTANT}}) misses it`, found);
    const all = await call("POST /assistants/search", () => client.assistants.search({}));
    check(all.some((a) => a.graph_id === ASSISTANT), "assistants.search({}) misses lead_agent", all);
    const byGraph = await call(`GET /assistants/${ASSISTANT}`, () => client.assistants.get(ASSISTANT));
    equal(byGraph.graph_id, ASSISTANT, "assistants.get(graph id).graph_id");
    check(typeof byGraph.assistant_id === "string" && byGraph.assistant_id.length > 0, "assistants.get: no assistant_id", byGraph);
    const byId = await call(`GET /assistants/${lead.assistant_id}`, () => client.assistants.get(lead.assistant_id));
    equal(byId.graph_id, ASSISTANT, "assistants.get(assistant id).graph_id");
    const schemas = await call(`GET /assistants/${ASSISTANT}/schemas`, () => client.assistants.getSchemas(ASSISTANT));
    equal(schemas.graph_id, ASSISTANT, "assistants.getSchemas().graph_id");
    const graph = await call(`GET /assistants/${ASSISTANT}/graph`, () => client.assistants.getGraph(ASSISTANT));
    check(typeof graph === "object" && graph !== null, "assistants.getGraph did not return an object", graph);
    await refused("GET /assistants/nope", 404, () => client.assistants.get("nope"));
}

async function threads() {
    const created = await call("POST /threads", () => client.threads.create({ metadata: { purpose: "sdk-test", suite: tag } }));
    const id = created.thread_id;
    check(typeof id === "string" && id.length > 0, "threads.create: no thread_id", created);
    equal(created.status, "idle", "threads.create: status");
    equal(created.metadata?.purpose, "sdk-test", "threads.create: metadata.purpose");
    check(typeof created.created_at === "string", "threads.create: no created_at", created);

    const got = await call(`GET /threads/${id}`, () => client.threads.get(id));
    equal(got.thread_id, id, "threads.get: thread_id");
    equal(got.metadata?.suite, tag, "threads.get: metadata.suite");

    const updated = await call(`PATCH /threads/${id}`, () => client.threads.update(id, { metadata: { stage: "updated" } }));
    equal(updated.metadata?.stage, "updated", "threads.update: metadata.stage");
    equal(updated.metadata?.purpose, "sdk-test", "threads.update merges metadata: metadata.purpose");

    const same = await call("POST /threads (if_exists do_nothing)", () =>
        client.threads.create({ threadId: id, ifExists: "do_nothing", metadata: { other: "x" } }),
    );
    equal(same.thread_id, id, "threads.create(if_exists: do_nothing): thread_id");
    equal(same.metadata?.stage, "updated", "threads.create(if_exists: do_nothing) keeps the thread: metadata.stage");
    await refused("POST /threads (if_exists raise, existing id)", 409, () => client.threads.create({ threadId: id, ifExists: "raise" }));

    const hits = await call("POST /threads/search", () => client.threads.search({ metadata: { suite: tag, stage: "updated" } }));
    check(Array.isArray(hits) && hits.some((t) => t.thread_id === id), "threads.search by metadata misses the thread", hits);
    const idle = await call("POST /threads/search (status)", () => client.threads.search({ metadata: { suite: tag }, status: "idle" }));
    check(idle.some((t) => t.thread_id === id), "threads.search by status idle misses the thread", idle);
    const none = await call("POST /threads/search", () => client.threads.search({ metadata: { suite: tag, stage: "never" } }));
    equal(none.length, 0, "threads.search with a metadata value no thread has: hits");

    const copy = await call(`POST /threads/${id}/copy`, () => client.threads.copy(id));
    check(typeof copy.thread_id === "string" && copy.thread_id !== id, "threads.copy: no new thread_id", copy);
    await call(`GET /threads/${copy.thread_id}`, () => client.threads.get(copy.thread_id));

    for (const doomed of [copy.thread_id, id]) {
        await call(`DELETE /threads/${doomed}`, () => client.threads.delete(doomed));
        const e = await refused(`GET /threads/${doomed} after delete`, 404, () => client.threads.get(doomed));
        check(e.message.includes(doomed), "the 404 of an unknown thread does not name its id", e.message);
    }
    await refused("DELETE /threads/<unknown>", 404, () => client.threads.delete("00000000-0000-4000-8000-000000000000"));
}

let historyThread; // the thread of the runs in other modes (six runs), for the history scenario

async function streamedRun() {
    const thread = await call("POST /threads", () => client.threads.create({ metadata: { purpose: "sdk-test", suite: tag } }));
    const id = thread.thread_id;
    let created;
    const route = `POST /threads/${id}/runs/stream`;
    const events = await collect(
        route,
        client.runs.stream(id, ASSISTANT, {
            input: input("hello agentware"),
            streamMode: ["values", "updates", "messages-tuple"],
            onRunCreated: (meta) => (created = meta),
            signal: signal(),
        }),
    );
    expectStreamStart(events, route);
    const runId = events[0].data.run_id;
    check(created !== undefined, `${route}: no Content-Location header naming the run (onRunCreated not called)`);
    equal(created.run_id, runId, "Content-Location run id vs metadata run_id");
    equal(created.thread_id, id, "Content-Location thread id");

    const values = events.filter((e) => e.event === "values");
    check(values.length >= 2, `${route}: fewer than 2 values events [${names(events)}]`);
    check(
        values.some((e) => humanIndex(e.data, "hello agentware") >= 0),
        "no values event carries the human message",
        values[0],
    );
    expectAnswer(values.at(-1).data, ANSWERS.stream, "the last values event");

    const updates = events.filter((e) => e.event === "updates");
    check(updates.length > 0, `${route}: no updates event [${names(events)}]`);
    for (const u of updates)
        check(typeof u.data === "object" && u.data !== null && !Array.isArray(u.data), "an updates event is not {node: update}", u);

    const messages = events.filter((e) => e.event === "messages");
    check(messages.length > 0, `${route}: no messages event (messages-tuple) [${names(events)}]`);
    for (const m of messages)
        check(Array.isArray(m.data) && m.data.length === 2, "a messages event is not [chunk, metadata]", m.data);
    const aiChunks = messages.map((m) => m.data[0]).filter(isAi);
    check(aiChunks.length > 0, "no messages event carries an ai chunk", messages[0]);
    const answerId = aiChunks.at(-1).id;
    const streamedText = aiChunks.filter((c) => c.id === answerId).map(textOf).join("");
    equal(streamedText, ANSWERS.stream, "the ai chunks of the answer, joined");
    // useStream merges the chunks into the message of the values by id: another id shows the answer twice.
    equal(answerId, lastAi(values.at(-1).data)?.id, "the ai chunks' id vs the id of the ai message in values");
    check(typeof messages[0].data[1]?.langgraph_node === "string", "messages metadata has no langgraph_node", messages[0].data[1]);

    const after = await expectThreadStatus(id, "idle", "after the streamed run");
    expectAnswer(after.values, ANSWERS.stream, "GET /threads/{id} values");
    const run = await call(`GET /threads/${id}/runs/${runId}`, () => client.runs.get(id, runId));
    equal(run.status, "success", "the streamed run's status");
    equal(run.thread_id, id, "the run's thread_id");
    const runs = await call(`GET /threads/${id}/runs`, () => client.runs.list(id));
    check(runs.length === 1 && runs[0].run_id === runId, "runs.list: expected the one run", runs);
}

async function otherModes() {
    const thread = await call("POST /threads", () => client.threads.create({ metadata: { purpose: "sdk-test", suite: tag } }));
    const id = (historyThread = thread.thread_id);
    const expectations = {
        events: (e) => e.event === "events" && typeof e.data?.event === "string" && e.data.event.startsWith("on_"),
        custom: null, // the lead agent's own custom events, if any: only the run's end is checked
        tasks: (e) => e.event === "tasks" && typeof e.data?.id === "string" && typeof e.data?.name === "string",
        debug: (e) => e.event === "debug" && ["checkpoint", "task", "task_result"].includes(e.data?.type),
        messages: (e) => e.event === "messages/complete" || e.event === "messages/partial",
        checkpoints: (e) => e.event === "checkpoints" && typeof e.data === "object" && "values" in e.data && "next" in e.data,
    };
    for (const [mode, expected] of Object.entries(expectations)) {
        const route = `POST /threads/${id}/runs/stream (stream_mode ${mode})`;
        const events = await collect(
            route,
            client.runs.stream(id, ASSISTANT, { input: input(`${mode} mode please`), streamMode: mode, signal: signal() }),
        );
        expectStreamStart(events, route);
        if (expected) check(events.some(expected), `${route}: no ${mode} event of the expected shape [${names(events)}]`, events[1]);
        if (mode === "messages") {
            const complete = events.filter((e) => e.event === "messages/complete").flatMap((e) => e.data ?? []);
            check(
                complete.some((m) => isAi(m) && textOf(m) === ANSWERS.modes.messages),
                "messages/complete never carries the answer",
                complete,
            );
        }
        const state = await call(`GET /threads/${id}/state`, () => client.threads.getState(id));
        expectAnswer(state.values, ANSWERS.modes[mode], `after the ${mode} run`);
        console.log(`     ${mode}: ${events.length} events [${[...new Set(events.map((e) => e.event))].join(" ")}]`);
    }
}

async function waitAndStateless() {
    const thread = await call("POST /threads", () => client.threads.create({ metadata: { purpose: "sdk-test", suite: tag } }));
    const id = thread.thread_id;
    const waited = await call(`POST /threads/${id}/runs/wait`, () =>
        client.runs.wait(id, ASSISTANT, { input: input("wait for me"), signal: signal() }),
    );
    check(humanIndex(waited, "wait for me") >= 0, "runs.wait: the values lack the human message", waited);
    expectAnswer(waited, ANSWERS.wait, "runs.wait");
    await expectThreadStatus(id, "idle", "after runs.wait");

    const stateless = await call("POST /runs/wait", () =>
        client.runs.wait(null, ASSISTANT, { input: input("no thread"), signal: signal() }),
    );
    expectAnswer(stateless, ANSWERS.stateless, "stateless runs.wait");
}

async function backgroundAndJoin() {
    const thread = await call("POST /threads", () => client.threads.create({ metadata: { purpose: "sdk-test", suite: tag } }));
    const id = thread.thread_id;
    const run = await call(`POST /threads/${id}/runs`, () => client.runs.create(id, ASSISTANT, { input: input("in the background") }));
    check(typeof run.run_id === "string", "runs.create: no run_id", run);
    equal(run.thread_id, id, "runs.create: thread_id");
    check(["pending", "running", "success"].includes(run.status), "runs.create: unexpected status", run.status);
    const joined = await call(`GET /threads/${id}/runs/${run.run_id}/join`, () =>
        client.runs.join(id, run.run_id, { signal: signal() }),
    );
    expectAnswer(joined, ANSWERS.join, "runs.join");
    const done = await call(`GET /threads/${id}/runs/${run.run_id}`, () => client.runs.get(id, run.run_id));
    equal(done.status, "success", "the joined run's status");
}

async function resumableJoinStream() {
    const thread = await call("POST /threads", () => client.threads.create({ metadata: { purpose: "sdk-test", suite: tag } }));
    const id = thread.thread_id;
    const run = await call(`POST /threads/${id}/runs (stream_resumable)`, () =>
        client.runs.create(id, ASSISTANT, {
            input: input("resumable please"),
            streamMode: ["values", "updates", "messages-tuple"],
            streamResumable: true,
        }),
    );
    const route = `GET /threads/${id}/runs/${run.run_id}/stream`;
    const all = await collect(route, client.runs.joinStream(id, run.run_id, { signal: signal() }));
    check(all.length >= 4, `${route}: fewer than 4 events [${names(all)}]`, all);
    equal(all[0].event, "metadata", `${route}: the first event of a join from the start`);
    const ids = all.map((e) => e.id);
    check(ids.every((x) => typeof x === "string" && x.length > 0), `${route}: an event without id: on a resumable run`, ids);
    check(new Set(ids).size === ids.length, `${route}: duplicate event ids`, ids);
    if (ids.every((x) => /^\d+$/.test(x)))
        check(ids.every((x, i) => i === 0 || Number(x) > Number(ids[i - 1])), `${route}: event ids do not increase`, ids);
    expectAnswer(all.filter((e) => e.event === "values").at(-1)?.data, ANSWERS.resumable, "joinStream's last values");

    const k = 1; // resume after the second event
    const again = await collect(
        `${route} with Last-Event-ID ${ids[k]}`,
        client.runs.joinStream(id, run.run_id, { lastEventId: ids[k], signal: signal() }),
    );
    check(
        show(again.map((e) => e.id)) === show(ids.slice(k + 1)),
        `${route} with Last-Event-ID ${ids[k]}: expected exactly the events after it, ids ${show(ids.slice(k + 1))}`,
        again.map((e) => `${e.id}:${e.event}`),
    );
    check(
        show(again.map((e) => e.data)) === show(all.slice(k + 1).map((e) => e.data)),
        `${route} with Last-Event-ID: the replayed events differ from the first read`,
        again,
    );
}

async function humanInTheLoop() {
    const thread = await call("POST /threads", () => client.threads.create({ metadata: { purpose: "sdk-test", suite: tag } }));
    const id = thread.thread_id;
    await streamUntilReview(id, "please write a note", "review");
    await expectParked(id, "review");
    await approve(id, "call_hitl", ANSWERS.approved, "approve");
}

async function history() {
    const id = historyThread;
    check(id !== undefined, "no thread from the runs in other modes");
    const entries = await call(`POST /threads/${id}/history`, () => client.threads.getHistory(id));
    check(Array.isArray(entries) && entries.length >= 6, "threads.getHistory after six runs: fewer than 6 checkpoints", entries?.length);
    const steps = entries.map((s) => s.metadata?.step);
    check(steps.every((s) => typeof s === "number"), "a history entry's metadata has no step", steps);
    check(steps.every((s, i) => i === 0 || s < steps[i - 1]), "threads.getHistory is not newest first (steps)", steps);
    const state = await call(`GET /threads/${id}/state`, () => client.threads.getState(id));
    equal(entries[0].checkpoint?.checkpoint_id, state.checkpoint?.checkpoint_id, "history[0] vs state: checkpoint_id");
    check(show(entries[0].values) === show(state.values), "history[0].values differ from the state's", entries[0].values);
    const two = await call(`POST /threads/${id}/history (limit 2)`, () => client.threads.getHistory(id, { limit: 2 }));
    equal(two.length, 2, "threads.getHistory({limit: 2}) length");
    const older = await call(`POST /threads/${id}/history (before)`, () =>
        client.threads.getHistory(id, { before: { configurable: { checkpoint_id: entries[0].checkpoint.checkpoint_id } } }),
    );
    equal(older[0]?.checkpoint?.checkpoint_id, entries[1].checkpoint.checkpoint_id, "threads.getHistory({before}) first entry");
    const atCheckpoint = await call(`GET /threads/${id}/state/${entries[1].checkpoint.checkpoint_id}`, () =>
        client.threads.getState(id, entries[1].checkpoint.checkpoint_id),
    );
    check(show(atCheckpoint.values) === show(entries[1].values), "getState(checkpoint_id) differs from that history entry", atCheckpoint);
}

async function newThread() {
    return (await call("POST /threads", () => client.threads.create({ metadata: { purpose: "sdk-test", suite: tag } }))).thread_id;
}
const background = (id, text, extra = {}) =>
    call(`POST /threads/${id}/runs${extra.multitaskStrategy ? ` (${extra.multitaskStrategy})` : ""}`, () =>
        client.runs.create(id, ASSISTANT, { input: input(text), ...extra }),
    );
const join = (id, runId) => call(`GET /threads/${id}/runs/${runId}/join`, () => client.runs.join(id, runId, { signal: signal() }));
const runStatus = async (id, runId) =>
    (await call(`GET /threads/${id}/runs/${runId}`, () => client.runs.get(id, runId))).status;

async function multitaskReject() {
    const id = await newThread();
    const first = await background(id, "busy with reject");
    const e = await refused(`POST /threads/${id}/runs (reject, busy thread)`, 422, () =>
        client.runs.create(id, ASSISTANT, { input: input("refused"), multitaskStrategy: "reject" }),
    );
    console.log(`     422 body: ${show(e.message)}`);
    const values = await join(id, first.run_id);
    expectAnswer(values, ANSWERS.slow, "the first run under reject");
    check(humanIndex(values, "refused") < 0, "the refused run's input reached the thread", values);
    equal(await runStatus(id, first.run_id), "success", "the first run under reject: status");
}

async function multitaskEnqueue() {
    const id = await newThread();
    const first = await background(id, "first in line");
    const second = await background(id, "second in line", { multitaskStrategy: "enqueue" });
    equal(second.status, "pending", "the enqueued run's status at creation");
    await join(id, first.run_id);
    const values = await join(id, second.run_id);
    equal(await runStatus(id, first.run_id), "success", "the first run under enqueue: status");
    equal(await runStatus(id, second.run_id), "success", "the enqueued run: status");
    const a = humanIndex(values, "first in line");
    const b = humanIndex(values, "second in line");
    check(a >= 0 && b > a, "enqueue: the inputs are not both in the thread in order", messagesOf(values).map(textOf));
    const between = messagesOf(values).slice(a + 1, b);
    check(between.some(isAi), "enqueue: the second run started before the first answered", messagesOf(values).map(textOf));
    expectAnswer(values, ANSWERS.slow, "the enqueued run");
}

async function multitaskInterrupt() {
    const id = await newThread();
    const first = await background(id, "to be interrupted");
    await waitRunning(id, first.run_id);
    const second = await background(id, "the interrupter", { multitaskStrategy: "interrupt" });
    const values = await join(id, second.run_id);
    equal(await runStatus(id, first.run_id), "interrupted", "the first run under interrupt: status");
    equal(await runStatus(id, second.run_id), "success", "the interrupting run: status");
    check(humanIndex(values, "to be interrupted") >= 0, "interrupt keeps the first run's input in the thread", messagesOf(values).map(textOf));
    check(humanIndex(values, "the interrupter") >= 0, "the interrupting run's input is missing", messagesOf(values).map(textOf));
    expectAnswer(values, ANSWERS.slow, "the interrupting run");
    await expectThreadStatus(id, "idle", "after interrupt");
}

async function multitaskRollback() {
    const id = await newThread();
    const first = await background(id, "to be rolled back");
    await waitRunning(id, first.run_id);
    const second = await background(id, "after the rollback", { multitaskStrategy: "rollback" });
    const values = await join(id, second.run_id);
    equal(await runStatus(id, second.run_id), "success", "the rolling-back run: status");
    await refused(`GET /threads/${id}/runs/${first.run_id} (rolled back)`, 404, () => client.runs.get(id, first.run_id));
    check(humanIndex(values, "to be rolled back") < 0, "rollback left the first run's input in the thread", messagesOf(values).map(textOf));
    check(humanIndex(values, "after the rollback") >= 0, "the rolling-back run's input is missing", messagesOf(values).map(textOf));
    expectAnswer(values, ANSWERS.slow, "the rolling-back run");
}

async function cancel() {
    const id = await newThread();
    const run = await background(id, "to be cancelled");
    await waitRunning(id, run.run_id);
    await call(`POST /threads/${id}/runs/${run.run_id}/cancel?wait=1&action=interrupt`, () =>
        client.runs.cancel(id, run.run_id, true, "interrupt"),
    );
    equal(await runStatus(id, run.run_id), "interrupted", "the cancelled run's status");
    await expectThreadStatus(id, "idle", "after cancel");
    await join(id, run.run_id); // a join on a finished run answers at once
    await refused(`POST /threads/${id}/runs/<unknown>/cancel`, 404, () =>
        client.runs.cancel(id, "00000000-0000-4000-8000-000000000000", false),
    );
}

async function errors() {
    const unknown = "00000000-0000-4000-8000-000000000000";
    await refused(`GET /threads/${unknown}`, 404, () => client.threads.get(unknown));
    await refused(`POST /threads/${unknown}/runs/wait`, 404, () => client.runs.wait(unknown, ASSISTANT, { input: input("x") }));
    const id = await newThread();
    await refused(`POST /threads/${id}/runs (unknown assistant)`, 404, () => client.runs.create(id, "nope", { input: input("x") }));
    const noAssistant = await fetch(`${url}/threads/${id}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json", ...authHeaders },
        body: JSON.stringify({ input: input("x") }),
    });
    check(
        [400, 422].includes(noAssistant.status),
        `POST /threads/${id}/runs without assistant_id: expected 400 or 422`,
        `${noAssistant.status} ${await noAssistant.text()}`,
    );
    const malformed = await fetch(`${url}/threads`, { method: "POST", headers: { "content-type": "application/json", ...authHeaders }, body: "{" });
    check([400, 422].includes(malformed.status), "POST /threads with malformed JSON: expected 400 or 422", malformed.status);
    await expectThreadStatus(id, "idle", "a thread no run reached");
}

async function cors() {
    const response = await fetch(`${url}/ok`, { headers: { Origin: "http://localhost:3000", ...authHeaders } });
    const allow = response.headers.get("access-control-allow-origin");
    check(allow === "*" || allow === "http://localhost:3000", "GET /ok from a local UI origin: access-control-allow-origin", allow);
    const expose = (response.headers.get("access-control-expose-headers") ?? "").toLowerCase();
    check(expose.includes("content-location"), "access-control-expose-headers lacks content-location (useStream's onCreated needs it)", expose);
}

async function auth() {
    if (!token) return;
    const response = await fetch(`${url}/threads/search`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    equal(response.status, 401, "POST /threads/search without the bearer token: status");
}

// ---- the restart, in two phases around a server restart on the same data directory

async function restartPhase1() {
    const thread = await call("POST /threads", () => client.threads.create({ metadata: { purpose: "restart", suite: tag } }));
    const id = thread.thread_id;
    await streamUntilReview(id, "write before the restart", "before the restart");
    await expectParked(id, "before the restart");
    console.log(`RESTART_THREAD_ID ${id}`);
}

async function restartPhase2(id) {
    check(typeof id === "string" && id.length > 0, "restart-2 needs the thread id of restart-1");
    const { thread } = await expectParked(id, "after the restart");
    check(humanIndex(thread.values, "write before the restart") >= 0, "after the restart: the thread lost its input", thread.values);
    const call_ = lastAi(thread.values)?.tool_calls?.[0];
    equal(call_?.name, "write_file", "after the restart: the parked ai message's tool call");
    const entries = await call(`POST /threads/${id}/history`, () => client.threads.getHistory(id));
    check(entries.length >= 2, "after the restart: the thread's history is gone", entries.length);
    const others = await call("POST /threads/search", () => client.threads.search({ metadata: { purpose: "sdk-test" }, limit: 100 }));
    check(others.length > 0, "after the restart: the main phase's threads are gone", others);
    await approve(id, "call_restart", ANSWERS.after_restart, "resume after the restart");
}

// ---- main

const phases = {
    main: async () => {
        await scenario("system: /ok, /info", systemRoutes);
        await scenario("auth: a request without the token", auth);
        await scenario("assistants: search, get, schemas, graph", assistants);
        await scenario("threads: create, get, update, search, copy, delete", threads);
        await scenario("runs.stream: values, updates, messages-tuple", streamedRun);
        await scenario("runs.stream: events, custom, tasks, debug, messages, checkpoints", otherModes);
        await scenario("runs.wait, on a thread and stateless", waitAndStateless);
        await scenario("runs.create in the background, runs.join", backgroundAndJoin);
        await scenario("runs.joinStream with Last-Event-ID (stream_resumable)", resumableJoinStream);
        await scenario("human in the loop: interrupt, state, resume with approve", humanInTheLoop);
        await scenario("threads.getHistory: newest first, limit, before, state at a checkpoint", history);
        await scenario("errors: unknown thread, assistant, bad bodies", errors);
        await scenario("multitask reject on a busy thread", multitaskReject);
        await scenario("multitask enqueue", multitaskEnqueue);
        await scenario("multitask interrupt", multitaskInterrupt);
        await scenario("multitask rollback", multitaskRollback);
        await scenario("runs.cancel (wait, interrupt)", cancel);
        await scenario("CORS headers for a local UI", cors);
    },
    "restart-1": () => scenario("restart, phase 1: a thread parked on a review", restartPhase1),
    "restart-2": () => scenario("restart, phase 2: the parked thread resumed", () => restartPhase2(args[1])),
};
if (!phases[phase]) {
    console.error(`unknown phase ${phase} (main, restart-1, restart-2 THREAD_ID)`);
    process.exit(2);
}
await phases[phase]();
if (failures > 0) {
    console.log(`js client (${phase}): ${failures} failed: ${failed.join("; ")}`);
    process.exit(1);
}
console.log(`js client (${phase}): all passed`);
