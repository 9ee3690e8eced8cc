// A small MCP server over stdio for what the reference servers do not do:
// the 2026-07-28 era, crashes, hangs, garbage, floods. The mode is argv[2].
// Mode "vYYYY-MM-DD" answers initialize with that protocol version whatever
// the client offered (a 2025 one we speak, or one we do not); the other
// 2025-era modes echo the version offered.
// Mode "http-MODE PORT" serves MODE over Streamable HTTP on 127.0.0.1: the
// 2026-07-28 era ("http-modern") checking the headers that era requires, or
// the 2025 era ("http-legacy", "http-vYYYY-MM-DD") with a session and, from
// 2025-06-18 on, the MCP-Protocol-Version header checked. Over HTTP the
// unlisted tool "seen" answers what the server received (a JSON array of
// {method, id, name, version (the MCP-Protocol-Version header), requestId,
// reason},
// and {closed: id} when the client closed a request's stream).
import http from "node:http";
import readline from "node:readline";

const argMode = process.argv[2] ?? "legacy";
const overHttp = argMode.startsWith("http-");
const mode = overHttp ? argMode.slice(5) : argMode;
let send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
const tools = [
  { name: "echo", description: "Echoes.", inputSchema: { type: "object", properties: { message: { type: "string" } } } },
  { name: "crash", description: "Exits mid-call.", inputSchema: { type: "object" } },
  { name: "hang", description: "Never answers.", inputSchema: { type: "object" } },
  { name: "garbage", description: "Answers garbage.", inputSchema: { type: "object" } },
  { name: "ask", description: "Asks the user.", inputSchema: { type: "object" } },
  { name: "roots", description: "Asks for roots.", inputSchema: { type: "object" } },
  { name: "sampling", description: "Asks the client to sample.", inputSchema: { type: "object" } },
  { name: "huge", description: "Answers a line too long.", inputSchema: { type: "object" } },
];
const asked = new Map(); // the id of a request we sent the client -> the call waiting for its answer
const ask = (call, method, params) => {
  const id = "srv-" + call;
  asked.set(id, call);
  send({ jsonrpc: "2.0", id, method, params });
};
let echoed = false; // after an echo, the list has one more tool (and the server says so)
const pinned = /^v(\d{4}-\d\d-\d\d)$/.exec(mode)?.[1]; // the version answered to initialize
let negotiated; // the version initialize answered (the 2025 era)
const seen = []; // over HTTP: what the server received, for the tool "seen"

function handle(msg) {
  if (msg.id !== undefined && msg.method === undefined) {
    // An answer to one of our requests: the waiting call reports what the client said.
    const call = asked.get(msg.id);
    if (call !== undefined) {
      send({ jsonrpc: "2.0", id: call, result: { content: [{ type: "text", text: JSON.stringify(msg) }] } });
      asked.delete(msg.id);
    }
    return;
  }
  if (msg.id === undefined) return; // notifications
  const reply = (result) => send({ jsonrpc: "2.0", id: msg.id, result });
  const error = (code, message) => send({ jsonrpc: "2.0", id: msg.id, error: { code, message } });
  const modern = mode === "modern";
  if (mode === "silent") return;
  if (msg.method === "server/discover") {
    // Modes "refuses" and "refuses-but-2025": a 2026-era server that turns the
    // client down with a recognised error (and, for the second, says it also
    // speaks 2025-11-25); each also answers initialize, so a client that fell
    // back wrongly would connect.
    if (mode === "refuses")
      return send({ jsonrpc: "2.0", id: msg.id, error: { code: -32021, message: "Missing required client capability: elicitation" } });
    if (mode === "refuses-but-2025")
      return send({ jsonrpc: "2.0", id: msg.id, error: { code: -32022, message: "Unsupported protocol version",
                                                         data: { supported: ["2025-11-25"] } } });
    if (!modern) return error(-32601, "Method not found");
    return reply({ resultType: "complete", supportedVersions: ["2026-07-28"], capabilities: { tools: {} },
                   _meta: { "io.modelcontextprotocol/serverInfo": { name: "fake-modern", version: "1" } } });
  }
  if (modern && msg.params?._meta?.["io.modelcontextprotocol/protocolVersion"] !== "2026-07-28")
    return error(-32022, "Unsupported protocol version");
  if (msg.method === "initialize") {
    if (modern) return error(-32601, "Method not found");
    const version = pinned ?? msg.params.protocolVersion;
    negotiated = version;
    return reply({ protocolVersion: version, capabilities: { tools: { listChanged: true } }, serverInfo: { name: "fake", version: "1" } });
  }
  if (msg.method === "tools/list") {
    // Two pages, to exercise the cursor.
    if (!msg.params?.cursor) return reply({ tools: tools.slice(0, 3), nextCursor: "page2" });
    return reply({ tools: echoed ? [...tools.slice(3), { name: "added", description: "New.", inputSchema: { type: "object" } }] : tools.slice(3) });
  }
  if (msg.method === "tools/call") {
    const name = msg.params.name;
    if (name === "echo") {
      send({ jsonrpc: "2.0", method: "notifications/progress",
             params: { progressToken: msg.params._meta?.progressToken ?? 0, progress: 1, total: 1 } });
      if (msg.params.arguments.message === "flood")
        for (let i = 0; i < 5000; ++i)
          send({ jsonrpc: "2.0", method: "notifications/progress",
                 params: { progressToken: msg.params._meta?.progressToken ?? 0, progress: i } });
      if (msg.params.arguments.message === "log")
        send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "asked to log" } });
      echoed = true;
      send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
      return reply({ content: [{ type: "text", text: "echo: " + msg.params.arguments.message }] });
    }
    if (name === "seen") return reply({ content: [{ type: "text", text: JSON.stringify(seen) }] });
    if (name === "added" && echoed) return reply({ content: [{ type: "text", text: "added works" }] });
    if (name === "crash") process.exit(3);
    if (name === "hang") return;
    if (name === "garbage") return process.stdout.write("this is not json\n");
    if (name === "huge") return process.stdout.write("x".repeat(3 << 20) + "\n");
    if (name === "ask") {
      if (modern && msg.params.inputResponses)
        return reply({ resultType: "complete", content: [{ type: "text", text: JSON.stringify(msg.params.inputResponses) }] });
      if (modern) return reply({ resultType: "input_required", requestState: "s1",
                                 inputRequests: { q: { method: "elicitation/create", params: { message: "Name?" } } } });
      return ask(msg.id, "elicitation/create", { message: "Name?" });
    }
    if (name === "roots") {
      if (modern) {
        if (msg.params.inputResponses) return reply({ resultType: "complete", content: [{ type: "text", text: JSON.stringify(msg.params.inputResponses) + " " + msg.params.requestState }] });
        return reply({ resultType: "input_required", requestState: "r1",
                       inputRequests: { r: { method: "roots/list", params: {} } } });
      }
      return ask(msg.id, "roots/list", {});
    }
    if (name === "sampling") {
      return ask(msg.id, "sampling/createMessage", {});
    }
    return error(-32602, "Unknown tool: " + name);
  }
  error(-32601, "Method not found");
}

if (!overHttp) {
  const rl = readline.createInterface({ input: process.stdin });
  rl.on("line", (line) => handle(JSON.parse(line)));
} else {
  const port = Number(process.argv[3]);
  http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      if (req.method !== "POST") { res.writeHead(405); return res.end(); }
      const msg = JSON.parse(body);
      const h = req.headers;
      seen.push({ method: msg.method, id: msg.id, name: msg.params?.name, version: h["mcp-protocol-version"] ?? null,
                  requestId: msg.params?.requestId, reason: msg.params?.reason });
      const fail = (why) => { res.writeHead(400, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: msg.id ?? null, error: { code: -32020, message: why } })); };
      if (!String(h["accept"]).includes("text/event-stream") || !String(h["accept"]).includes("application/json"))
        return fail("Accept header");
      if (mode === "modern") {
        if (h["mcp-protocol-version"] !== "2026-07-28") return fail("MCP-Protocol-Version header: " + h["mcp-protocol-version"]);
        if (h["mcp-method"] !== msg.method) return fail("Mcp-Method header: " + h["mcp-method"]);
        if (msg.method === "tools/call" && h["mcp-name"] !== msg.params.name) return fail("Mcp-Name header");
        if (h["x-api-key"] !== "k-123") { res.writeHead(401); return res.end("no key"); }
      } else if (negotiated !== undefined && msg.method !== "initialize") {
        // A session's requests: its id, and (2025-06-18 on, which added the header) its version.
        if (h["mcp-session-id"] !== "s-1") return fail("Mcp-Session-Id header: " + h["mcp-session-id"]);
        if (negotiated >= "2025-06-18" && h["mcp-protocol-version"] !== negotiated)
          return fail("MCP-Protocol-Version header: " + h["mcp-protocol-version"]);
      }
      res.on("close", () => { if (!res.writableFinished) seen.push({ closed: msg.id }); });
      if (msg.method === "tools/call" && msg.params.name === "hang") return; // holds the stream open
      const out = [];
      send = (m) => out.push(m);
      handle(msg);
      const session = msg.method === "initialize" && mode !== "modern" ? { "Mcp-Session-Id": "s-1" } : {};
      if (out.length === 0) { res.writeHead(202); return res.end(); }
      if (out.length === 1) { res.writeHead(200, { "Content-Type": "application/json", ...session }); return res.end(JSON.stringify(out[0])); }
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      for (const m of out) res.write("event: message\ndata: " + JSON.stringify(m) + "\n\n");
      res.end();
    });
  }).listen(port, "127.0.0.1");
}
