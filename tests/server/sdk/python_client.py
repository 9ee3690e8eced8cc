"""Drives `agentware serve` with the official Python LangGraph SDK (langgraph-sdk, pinned
in requirements.txt) and checks what the server does. Run by cmake/server-sdk-test.sh:

    python python_client.py URL [main | restart-1 | restart-2 THREAD_ID]

URL may come from AGENTWARE_SERVER_URL instead. AGENTWARE_SERVER_TOKEN, when set, is
sent as a bearer token. The first failure ends the run with exit status 1
(AGENTWARE_SDK_KEEP_GOING=1 runs every scenario and reports each failure).

The server plays tests/server/sdk/script.json: its answers are taken in order across
runs, so the runs that call the model come in the order of js_client.mjs (ANSWERS).
"""

import asyncio
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request

import httpx
from langgraph_sdk import get_client

ANSWERS = {
    "stream": "Hello from agentware.",
    "modes": {
        "events": "Answer in events mode.",
        "custom": "Answer in custom mode.",
        "tasks": "Answer in tasks mode.",
        "debug": "Answer in debug mode.",
        "messages": "Answer in messages mode.",
        "checkpoints": "Answer in checkpoints mode.",
    },
    "wait": "Answer of a run waited for.",
    "stateless": "Answer of a stateless run.",
    "join": "Answer of a joined run.",
    "resumable": "Answer of a resumable run.",
    "approved": "The note is written.",
    "slow": "A slow answer.",
    "after_restart": "The note survived the restart.",
}
ASSISTANT = "lead_agent"
TIMEOUT_S = 60.0
UNKNOWN = "00000000-0000-4000-8000-000000000000"

args = sys.argv[1:]
url = args.pop(0) if args and re.match(r"^https?:", args[0]) else os.environ.get("AGENTWARE_SERVER_URL")
if not url:
    sys.exit("usage: python_client.py URL [main|restart-1|restart-2 THREAD_ID] (or set AGENTWARE_SERVER_URL)")
url = url.rstrip("/")
phase = args[0] if args else "main"
token = os.environ.get("AGENTWARE_SERVER_TOKEN")
auth_headers = {"Authorization": f"Bearer {token}"} if token else {}
keep_going = os.environ.get("AGENTWARE_SDK_KEEP_GOING") == "1"
tag = f"sdk-py-{int(time.time() * 1000)}"
client = None  # made inside the event loop


class Failure(Exception):
    pass


def show(value):
    try:
        s = json.dumps(value, default=str)
    except Exception:
        s = repr(value)
    return s if len(s) <= 2000 else s[:2000] + "…"


def describe(e):
    if isinstance(e, Failure):
        return str(e)
    if isinstance(e, httpx.HTTPStatusError):
        body = getattr(e, "body", None)
        if body is None:
            try:
                body = e.response.text
            except Exception:
                body = ""
        return f"HTTP {e.response.status_code}: {show(body)}"
    return f"{type(e).__name__}: {e}"


def check(condition, message, *got):
    if not condition:
        raise Failure(f"{message}\n    got: {show(got[0])}" if got else message)


def equal(actual, expected, what):
    check(actual == expected, f"{what}: expected {show(expected)}", actual)


async def call(route, awaitable):
    try:
        return await asyncio.wait_for(awaitable, TIMEOUT_S)
    except Failure:
        raise
    except Exception as e:
        raise Failure(f"{route} failed: {describe(e)}") from e


async def refused(route, status, awaitable):
    try:
        result = await asyncio.wait_for(awaitable, TIMEOUT_S)
    except httpx.HTTPStatusError as e:
        check(e.response.status_code == status, f"{route}: expected HTTP {status}, got {describe(e)}")
        return e
    except Exception as e:
        raise Failure(f"{route}: expected HTTP {status}, got {describe(e)}") from e
    raise Failure(f"{route}: expected HTTP {status}, got a success: {show(result)}")


async def collect(route, stream):
    events = []

    async def read():
        async for part in stream:
            events.append(part)

    try:
        await asyncio.wait_for(read(), TIMEOUT_S)
    except Exception as e:
        raise Failure(f"{route}: the stream failed after {len(events)} events [{names(events)}]: {describe(e)}") from e
    return events


def names(events):
    return " ".join(e.event for e in events)


def raw(method, path, body=None, headers=None):
    """A request outside the SDK: (status, headers, text)."""
    data = body.encode() if isinstance(body, str) else body
    request = urllib.request.Request(url + path, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


failures = []


async def scenario(name, fn, *fn_args):
    try:
        await fn(*fn_args)
        print(f"ok   {name}", flush=True)
    except Exception as e:
        failures.append(name)
        print(f"FAIL {name}: {describe(e)}", flush=True)
        if not keep_going:
            print(f"python client ({phase}): failed at \"{name}\"", flush=True)
            sys.exit(1)


# ---- messages as the server serialises them


def messages_of(values):
    m = values.get("messages") if isinstance(values, dict) else None
    return m if isinstance(m, list) else []


def is_human(m):
    return isinstance(m, dict) and (m.get("type") == "human" or m.get("role") == "user")


def is_ai(m):
    return isinstance(m, dict) and (m.get("type") in ("ai", "AIMessageChunk") or m.get("role") == "assistant")


def is_tool(m):
    return isinstance(m, dict) and (m.get("type") == "tool" or m.get("role") == "tool")


def text_of(m):
    content = m.get("content") if isinstance(m, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b if isinstance(b, str) else (b.get("text") or "") for b in content)
    return ""


def last_ai(values):
    ais = [m for m in messages_of(values) if is_ai(m)]
    return ais[-1] if ais else None


def human_index(values, text):
    for i, m in enumerate(messages_of(values)):
        if is_human(m) and text_of(m) == text:
            return i
    return -1


def user(text):
    return {"messages": [{"role": "user", "content": text}]}


def expect_answer(values, answer, what):
    ai = last_ai(values)
    check(ai is not None, f"{what}: no ai message in the values", values)
    equal(text_of(ai), answer, f"{what}: the last ai message")


def expect_stream_start(events, route):
    check(len(events) > 0, f"{route}: the stream is empty")
    equal(events[0].event, "metadata", f"{route}: the first event")
    check(isinstance((events[0].data or {}).get("run_id"), str), f"{route}: the metadata event has no run_id", events[0].data)
    errors = [e for e in events if e.event == "error"]
    check(not errors, f"{route}: the stream has an error event", errors[0].data if errors else None)


async def expect_thread_status(thread_id, status, what):
    thread = await call(f"GET /threads/{thread_id}", client.threads.get(thread_id))
    equal(thread["status"], status, f"{what}: thread status")
    return thread


async def new_thread(purpose="sdk-test"):
    thread = await call("POST /threads", client.threads.create(metadata={"purpose": purpose, "suite": tag}))
    return thread["thread_id"]


async def wait_running(thread_id, run_id):
    until = time.monotonic() + 10
    while True:
        run = await call(f"GET /threads/{thread_id}/runs/{run_id}", client.runs.get(thread_id, run_id))
        if run["status"] == "running":
            break
        check(
            run["status"] == "pending",
            f"run {run_id} ended ({run['status']}) before the test found it running: "
            'does the scripted model honour "delay_ms"?',
            run,
        )
        check(time.monotonic() < until, f"run {run_id} still pending after 10 s", run)
        await asyncio.sleep(0.025)
    await asyncio.sleep(0.3)


def interrupt_of(values):
    items = values.get("__interrupt__") if isinstance(values, dict) else None
    return items[0] if isinstance(items, list) and items else None


def expect_write_file_review(interrupt, what):
    check(interrupt is not None, f"{what}: no __interrupt__")
    check(isinstance(interrupt.get("id"), str), f"{what}: the interrupt has no id", interrupt)
    value = interrupt.get("value") or {}
    actions = value.get("action_requests") or []
    check(actions, f"{what}: the interrupt value has no action_requests", value)
    equal(actions[0].get("name"), "write_file", f"{what}: action_requests[0].name")
    reviews = value.get("review_configs") or []
    check(reviews, f"{what}: the interrupt value has no review_configs", value)
    equal(reviews[0].get("action_name"), "write_file", f"{what}: review_configs[0].action_name")
    check("approve" in (reviews[0].get("allowed_decisions") or []), f"{what}: approve is not allowed", reviews[0])


async def stream_until_review(thread_id, text, what):
    route = f"POST /threads/{thread_id}/runs/stream"
    events = await collect(
        route, client.runs.stream(thread_id, ASSISTANT, input=user(text), stream_mode=["values", "updates"])
    )
    expect_stream_start(events, f"{what}: {route}")
    updates = [e for e in events if e.event == "updates" and isinstance(e.data, dict) and "__interrupt__" in e.data]
    check(updates, f"{what}: no updates event with __interrupt__ [{names(events)}]", events[-1].data)
    expect_write_file_review(interrupt_of(updates[0].data), f"{what}: updates.__interrupt__")
    values = [e for e in events if e.event == "values"]
    check(values and interrupt_of(values[-1].data), f"{what}: the last values event has no __interrupt__", values[-1].data if values else None)


async def expect_parked(thread_id, what):
    thread = await expect_thread_status(thread_id, "interrupted", what)
    pending = [i for items in (thread.get("interrupts") or {}).values() for i in items]
    check(pending, f"{what}: GET /threads/{{id}} lists no interrupts", thread.get("interrupts"))
    expect_write_file_review(pending[0], f"{what}: thread.interrupts")
    state = await call(f"GET /threads/{thread_id}/state", client.threads.get_state(thread_id))
    check(state.get("next"), f"{what}: state.next is empty while parked", state.get("next"))
    in_tasks = [i for t in state.get("tasks") or [] for i in t.get("interrupts") or []]
    check(in_tasks or state.get("interrupts"), f"{what}: the state's tasks carry no interrupts", state.get("tasks"))
    return thread


async def approve(thread_id, tool_call_id, answer, what):
    route = f"POST /threads/{thread_id}/runs/stream (command.resume)"
    events = await collect(
        route,
        client.runs.stream(
            thread_id,
            ASSISTANT,
            command={"resume": {"decisions": [{"type": "approve"}]}},
            stream_mode=["values", "updates"],
        ),
    )
    expect_stream_start(events, f"{what}: {route}")
    state = await call(f"GET /threads/{thread_id}/state", client.threads.get_state(thread_id))
    tools = [m for m in messages_of(state["values"]) if is_tool(m) and m.get("tool_call_id") == tool_call_id]
    check(tools, f"{what}: no tool message answers {tool_call_id}", messages_of(state["values"]))
    equal(tools[0].get("name"), "write_file", f"{what}: the tool message's name")
    check(tools[0].get("status") != "error", f"{what}: the approved write_file failed", tools[0])
    expect_answer(state["values"], answer, what)
    thread = await expect_thread_status(thread_id, "idle", f"{what}: after the resume")
    left = [i for items in (thread.get("interrupts") or {}).values() for i in items]
    check(not left, f"{what}: interrupts left after the resume", thread.get("interrupts"))


# ---- scenarios of the main phase (in the order of script.json)


async def system_routes():
    status, _, body = raw("GET", "/ok", headers=auth_headers)
    equal(status, 200, "GET /ok status")
    equal(json.loads(body).get("ok"), True, "GET /ok body .ok")
    status, _, body = raw("GET", "/info", headers=auth_headers)
    equal(status, 200, "GET /info status")
    info = json.loads(body)
    check(isinstance(info.get("flags"), dict), "GET /info has no flags object", info)
    print(f"     /info: {show(info)}")


async def auth():
    if not token:
        return
    status, _, _ = raw("POST", "/threads/search", "{}", {"content-type": "application/json"})
    equal(status, 401, "POST /threads/search without the bearer token: status")


async def assistants():
    found = await call("POST /assistants/search", client.assistants.search(graph_id=ASSISTANT))
    lead = next((a for a in found if a.get("graph_id") == ASSISTANT), None)
    check(lead is not None, "assistants.search(graph_id=lead_agent) misses it", found)
    got = await call(f"GET /assistants/{ASSISTANT}", client.assistants.get(ASSISTANT))
    equal(got.get("graph_id"), ASSISTANT, "assistants.get(graph id).graph_id")
    by_id = await call(f"GET /assistants/{lead['assistant_id']}", client.assistants.get(lead["assistant_id"]))
    equal(by_id.get("graph_id"), ASSISTANT, "assistants.get(assistant id).graph_id")
    await refused("GET /assistants/nope", 404, client.assistants.get("nope"))


async def threads():
    created = await call("POST /threads", client.threads.create(metadata={"purpose": "sdk-test", "suite": tag}))
    tid = created["thread_id"]
    equal(created.get("status"), "idle", "threads.create: status")
    got = await call(f"GET /threads/{tid}", client.threads.get(tid))
    equal(got["metadata"].get("suite"), tag, "threads.get: metadata.suite")
    updated = await call(f"PATCH /threads/{tid}", client.threads.update(tid, metadata={"stage": "updated"}))
    equal(updated["metadata"].get("stage"), "updated", "threads.update: metadata.stage")
    equal(updated["metadata"].get("purpose"), "sdk-test", "threads.update merges metadata: metadata.purpose")
    hits = await call("POST /threads/search", client.threads.search(metadata={"suite": tag, "stage": "updated"}))
    check(any(t["thread_id"] == tid for t in hits), "threads.search by metadata misses the thread", hits)
    none = await call("POST /threads/search", client.threads.search(metadata={"suite": tag, "stage": "never"}))
    equal(len(none), 0, "threads.search with a metadata value no thread has: hits")
    copy = await call(f"POST /threads/{tid}/copy (no body)", client.threads.copy(tid))
    check(isinstance(copy, dict) and copy.get("thread_id") not in (None, tid), "threads.copy: no new thread_id", copy)
    for doomed in (copy["thread_id"], tid):
        await call(f"DELETE /threads/{doomed}", client.threads.delete(doomed))
        await refused(f"GET /threads/{doomed} after delete", 404, client.threads.get(doomed))


history_thread = None


async def streamed_run():
    tid = await new_thread()
    created = []
    route = f"POST /threads/{tid}/runs/stream"
    events = await collect(
        route,
        client.runs.stream(
            tid,
            ASSISTANT,
            input=user("hello agentware"),
            stream_mode=["values", "updates", "messages-tuple"],
            on_run_created=created.append,
        ),
    )
    expect_stream_start(events, route)
    run_id = events[0].data["run_id"]
    check(created, f"{route}: no Content-Location header naming the run (on_run_created not called)")
    equal(created[0]["run_id"], run_id, "Content-Location run id vs metadata run_id")
    values = [e.data for e in events if e.event == "values"]
    check(any(human_index(v, "hello agentware") >= 0 for v in values), "no values event carries the human message", values[:1])
    expect_answer(values[-1], ANSWERS["stream"], "the last values event")
    check(any(e.event == "updates" for e in events), f"{route}: no updates event [{names(events)}]")
    messages = [e.data for e in events if e.event == "messages"]
    check(messages, f"{route}: no messages event (messages-tuple) [{names(events)}]")
    check(all(isinstance(m, list) and len(m) == 2 for m in messages), "a messages event is not [chunk, metadata]", messages[0])
    chunks = [m[0] for m in messages if is_ai(m[0])]
    check(chunks, "no messages event carries an ai chunk", messages[0])
    answer_id = chunks[-1].get("id")
    equal("".join(text_of(c) for c in chunks if c.get("id") == answer_id), ANSWERS["stream"], "the ai chunks, joined")
    equal(answer_id, (last_ai(values[-1]) or {}).get("id"), "the ai chunks' id vs the id of the ai message in values")
    await expect_thread_status(tid, "idle", "after the streamed run")
    run = await call(f"GET /threads/{tid}/runs/{run_id}", client.runs.get(tid, run_id))
    equal(run["status"], "success", "the streamed run's status")


async def other_modes():
    global history_thread
    tid = history_thread = await new_thread()
    for mode in ("events", "custom", "tasks", "debug", "messages", "checkpoints"):
        route = f"POST /threads/{tid}/runs/stream (stream_mode {mode})"
        events = await collect(route, client.runs.stream(tid, ASSISTANT, input=user(f"{mode} mode please"), stream_mode=mode))
        expect_stream_start(events, route)
        kinds = {e.event for e in events}
        if mode != "custom":
            wanted = ("messages/complete", "messages/partial") if mode == "messages" else (mode,)
            check(any(k in kinds for k in wanted), f"{route}: no {mode} event [{names(events)}]")
        state = await call(f"GET /threads/{tid}/state", client.threads.get_state(tid))
        expect_answer(state["values"], ANSWERS["modes"][mode], f"after the {mode} run")
        print(f"     {mode}: {len(events)} events [{' '.join(sorted(kinds))}]")


async def wait_and_stateless():
    tid = await new_thread()
    waited = await call(f"POST /threads/{tid}/runs/wait", client.runs.wait(tid, ASSISTANT, input=user("wait for me")))
    expect_answer(waited, ANSWERS["wait"], "runs.wait")
    stateless = await call("POST /runs/wait", client.runs.wait(None, ASSISTANT, input=user("no thread")))
    expect_answer(stateless, ANSWERS["stateless"], "stateless runs.wait")


async def background_and_join():
    tid = await new_thread()
    run = await call(f"POST /threads/{tid}/runs", client.runs.create(tid, ASSISTANT, input=user("in the background")))
    equal(run.get("thread_id"), tid, "runs.create: thread_id")
    joined = await call(f"GET /threads/{tid}/runs/{run['run_id']}/join", client.runs.join(tid, run["run_id"]))
    expect_answer(joined, ANSWERS["join"], "runs.join")


async def resumable_join_stream():
    tid = await new_thread()
    run = await call(
        f"POST /threads/{tid}/runs (stream_resumable)",
        client.runs.create(
            tid,
            ASSISTANT,
            input=user("resumable please"),
            stream_mode=["values", "updates", "messages-tuple"],
            stream_resumable=True,
        ),
    )
    route = f"GET /threads/{tid}/runs/{run['run_id']}/stream"
    everything = await collect(route, client.runs.join_stream(tid, run["run_id"]))
    check(len(everything) >= 4, f"{route}: fewer than 4 events [{names(everything)}]")
    equal(everything[0].event, "metadata", f"{route}: the first event of a join from the start")
    ids = [e.id for e in everything]
    check(all(ids), f"{route}: an event without id: on a resumable run", ids)
    check(len(set(ids)) == len(ids), f"{route}: duplicate event ids", ids)
    if all(i.isdigit() for i in ids):
        check(all(int(b) > int(a) for a, b in zip(ids, ids[1:])), f"{route}: event ids do not increase", ids)
    k = 2
    again = await collect(
        f"{route} with Last-Event-ID {ids[k]}", client.runs.join_stream(tid, run["run_id"], last_event_id=ids[k])
    )
    equal([e.id for e in again], ids[k + 1 :], f"{route} with Last-Event-ID {ids[k]}: the ids replayed")
    equal([e.data for e in again], [e.data for e in everything[k + 1 :]], f"{route} with Last-Event-ID: the events replayed")
    values = [e.data for e in everything if e.event == "values"]
    expect_answer(values[-1] if values else {}, ANSWERS["resumable"], "joinStream's last values")


async def human_in_the_loop():
    tid = await new_thread()
    await stream_until_review(tid, "please write a note", "review")
    await expect_parked(tid, "review")
    await approve(tid, "call_hitl", ANSWERS["approved"], "approve")


async def history():
    tid = history_thread
    check(tid is not None, "no thread from the runs in other modes")
    entries = await call(f"POST /threads/{tid}/history", client.threads.get_history(tid))
    check(len(entries) >= 6, "threads.get_history after six runs: fewer than 6 checkpoints", len(entries))
    steps = [s.get("metadata", {}).get("step") for s in entries]
    check(all(isinstance(s, int) for s in steps), "a history entry's metadata has no step", steps)
    check(all(b < a for a, b in zip(steps, steps[1:])), "threads.get_history is not newest first (steps)", steps)
    # The Python SDK sends `before` as a checkpoint object (the JS one as a config).
    older = await call(
        f"POST /threads/{tid}/history (before, a checkpoint)",
        client.threads.get_history(tid, before=entries[0]["checkpoint"]),
    )
    check(older, "threads.get_history(before=checkpoint) is empty", older)
    equal(older[0]["checkpoint"]["checkpoint_id"], entries[1]["checkpoint"]["checkpoint_id"], "get_history(before) first entry")


async def multitask(strategy):
    tid = await new_thread()
    first = await call(f"POST /threads/{tid}/runs", client.runs.create(tid, ASSISTANT, input=user(f"busy under {strategy}")))
    fid = first["run_id"]
    if strategy in ("interrupt", "rollback"):
        await wait_running(tid, fid)
    route = f"POST /threads/{tid}/runs ({strategy}, busy thread)"
    second_input = user(f"second under {strategy}")
    if strategy == "reject":
        await refused(route, 422, client.runs.create(tid, ASSISTANT, input=second_input, multitask_strategy="reject"))
        values = await call("join", client.runs.join(tid, fid))
        check(human_index(values, "second under reject") < 0, "the refused run's input reached the thread", values)
        expect_answer(values, ANSWERS["slow"], "the first run under reject")
        return
    second = await call(route, client.runs.create(tid, ASSISTANT, input=second_input, multitask_strategy=strategy))
    if strategy == "enqueue":
        equal(second.get("status"), "pending", "the enqueued run's status at creation")
        await call("join", client.runs.join(tid, fid))
    values = await call("join", client.runs.join(tid, second["run_id"]))
    second_run = await call("GET run", client.runs.get(tid, second["run_id"]))
    equal(second_run["status"], "success", f"the second run under {strategy}: status")
    a = human_index(values, f"busy under {strategy}")
    b = human_index(values, f"second under {strategy}")
    texts = [text_of(m) for m in messages_of(values)]
    check(b >= 0, f"{strategy}: the second run's input is missing", texts)
    if strategy == "enqueue":
        check(0 <= a < b and any(is_ai(m) for m in messages_of(values)[a + 1 : b]), "enqueue: the runs did not run in order", texts)
        equal((await call("GET run", client.runs.get(tid, fid)))["status"], "success", "the first run under enqueue")
    elif strategy == "interrupt":
        check(a >= 0, "interrupt keeps the first run's input in the thread", texts)
        equal((await call("GET run", client.runs.get(tid, fid)))["status"], "interrupted", "the first run under interrupt")
    else:
        check(a < 0, "rollback left the first run's input in the thread", texts)
        await refused(f"GET /threads/{tid}/runs/{fid} (rolled back)", 404, client.runs.get(tid, fid))
    expect_answer(values, ANSWERS["slow"], f"the second run under {strategy}")


async def cancel():
    tid = await new_thread()
    run = await call(f"POST /threads/{tid}/runs", client.runs.create(tid, ASSISTANT, input=user("to be cancelled")))
    await wait_running(tid, run["run_id"])
    await call(
        f"POST /threads/{tid}/runs/{run['run_id']}/cancel?wait=1",
        client.runs.cancel(tid, run["run_id"], wait=True, action="interrupt"),
    )
    got = await call("GET run", client.runs.get(tid, run["run_id"]))
    equal(got["status"], "interrupted", "the cancelled run's status")
    await expect_thread_status(tid, "idle", "after cancel")


async def errors():
    await refused(f"GET /threads/{UNKNOWN}", 404, client.threads.get(UNKNOWN))
    tid = await new_thread()
    await refused(f"POST /threads/{tid}/runs (unknown assistant)", 404, client.runs.create(tid, "nope", input=user("x")))
    status, _, body = raw("POST", "/threads", "{", {"content-type": "application/json", **auth_headers})
    check(status in (400, 422), "POST /threads with malformed JSON: expected 400 or 422", f"{status} {body}")


async def restart_phase1():
    tid = await new_thread("restart")
    await stream_until_review(tid, "write before the restart", "before the restart")
    await expect_parked(tid, "before the restart")
    print(f"RESTART_THREAD_ID {tid}", flush=True)


async def restart_phase2(tid):
    check(bool(tid), "restart-2 needs the thread id of restart-1")
    thread = await expect_parked(tid, "after the restart")
    check(human_index(thread.get("values"), "write before the restart") >= 0, "after the restart: the thread lost its input", thread.get("values"))
    history = await call(f"POST /threads/{tid}/history", client.threads.get_history(tid))
    check(len(history) >= 2, "after the restart: the thread's history is gone", len(history))
    others = await call("POST /threads/search", client.threads.search(metadata={"purpose": "sdk-test"}, limit=100))
    check(others, "after the restart: the main phase's threads are gone", others)
    await approve(tid, "call_restart", ANSWERS["after_restart"], "resume after the restart")


async def main():
    global client
    client = get_client(url=url, api_key=None, headers=auth_headers, timeout=TIMEOUT_S)
    if phase == "main":
        await scenario("system: /ok, /info", system_routes)
        await scenario("auth: a request without the token", auth)
        await scenario("assistants: search, get", assistants)
        await scenario("threads: create, get, update, search, copy, delete", threads)
        await scenario("runs.stream: values, updates, messages-tuple", streamed_run)
        await scenario("runs.stream: events, custom, tasks, debug, messages, checkpoints", other_modes)
        await scenario("runs.wait, on a thread and stateless", wait_and_stateless)
        await scenario("runs.create in the background, runs.join", background_and_join)
        await scenario("runs.join_stream with last_event_id (stream_resumable)", resumable_join_stream)
        await scenario("human in the loop: interrupt, state, resume with approve", human_in_the_loop)
        await scenario("threads.get_history: newest first, before a checkpoint", history)
        await scenario("errors: unknown thread, assistant, malformed JSON", errors)
        for strategy in ("reject", "enqueue", "interrupt", "rollback"):
            await scenario(f"multitask {strategy} on a busy thread", multitask, strategy)
        await scenario("runs.cancel (wait, interrupt)", cancel)
    elif phase == "restart-1":
        await scenario("restart, phase 1: a thread parked on a review", restart_phase1)
    elif phase == "restart-2":
        await scenario("restart, phase 2: the parked thread resumed", restart_phase2, args[1] if len(args) > 1 else None)
    else:
        sys.exit(f"unknown phase {phase} (main, restart-1, restart-2 THREAD_ID)")
    if failures:
        print(f"python client ({phase}): {len(failures)} failed: {'; '.join(failures)}")
        sys.exit(1)
    print(f"python client ({phase}): all passed")


if __name__ == "__main__":
    asyncio.run(main())
