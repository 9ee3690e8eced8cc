// The graph server_bench runs on the LangGraph JS dev server: LangChain's
// createAgent with one tool, on ChatOpenAI pointed at the benchmark's fake
// OpenAI-compatible model (AGENTWARE_BENCH_MODEL_URL, set by server_bench).
import { ChatOpenAI } from "@langchain/openai";
import { createAgent, tool } from "langchain";
import { z } from "zod";

const echo = tool(({ text }) => `echo: ${text}`, {
  name: "echo",
  description: "Echoes its text.",
  schema: z.object({ text: z.string() }),
});

const model = new ChatOpenAI({
  model: "fake",
  apiKey: "not-needed",
  streaming: true,
  maxRetries: 0,
  configuration: { baseURL: process.env.AGENTWARE_BENCH_MODEL_URL },
});

export const agent = createAgent({ model, tools: [echo] });
