// The official TypeScript SDK's client, driven by benchmarks/mcp.cpp so that
// both clients make the same calls to the same server in one run.
// usage: node sdk_client_bench.mjs stdio <server module> | http <url>
// Then, per line on stdin, "<calls> <concurrency>": makes `calls` calls of
// server-everything's `echo`, `concurrency` of them in flight at a time, and
// answers with the elapsed nanoseconds on a line.
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [, , kind, target] = process.argv;
const client = new Client({ name: "agentware-bench", version: "1" });
const transport =
  kind === "stdio"
    ? new StdioClientTransport({ command: process.execPath, args: [target, "stdio"], env: { ...process.env }, stderr: "ignore" })
    : new StreamableHTTPClientTransport(new URL(target));
await client.connect(transport);

async function run(calls, concurrency) {
  let next = 0;
  const worker = async () => {
    while (next < calls) {
      next++;
      await client.callTool({ name: "echo", arguments: { message: "bench" } });
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return process.hrtime.bigint() - start;
}

process.stdout.write("ready\n");
for await (const line of readline.createInterface({ input: process.stdin })) {
  const [calls, concurrency] = line.trim().split(/\s+/).map(Number);
  if (!calls) break;
  process.stdout.write((await run(calls, concurrency)).toString() + "\n");
}
await client.close();
