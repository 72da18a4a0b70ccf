import pino from "pino";
import { buildBookingGraph } from "../../../src/examples/booking";
import {
  AssistantDirectory,
  systemAssistantId,
} from "../../../src/runtime/http/assistant-directory";
import { readAssistantDefaults, readRuntimeConfig } from "../../../src/runtime/config";
import { LANGGRAPH_ENVIRONMENT } from "../../../src/runtime/environment";
import { GraphRegistry } from "../../../src/runtime/graphs/graph-registry";
import type { GraphFactory } from "../../../src/runtime/types";
import { InvalidConfigurationError } from "../../../src/shared/errors";

const booking: GraphFactory = ({ checkpointer }) => buildBookingGraph({ checkpointer });
const logger = pino({ level: "silent" });

/** The error `read` throws. */
function failure(read: () => unknown): InvalidConfigurationError {
  try {
    read();
  } catch (error) {
    if (error instanceof InvalidConfigurationError) return error;
    throw error;
  }
  throw new Error("expected an InvalidConfigurationError, got none");
}

describe("LANGGRAPH_CONFIG: each graph's system assistant defaults, as LangGraph Server reads them", () => {
  it("is read by readRuntimeConfig under LangGraph Server's own variable name", () => {
    expect(LANGGRAPH_ENVIRONMENT.graphConfig).toBe("LANGGRAPH_CONFIG");
    const config = readRuntimeConfig({
      LANGGRAPH_CONFIG: JSON.stringify({
        agent: { configurable: { model_name: "openai" } },
        simple_runtime: { context: { model: "unknown" } },
      }),
    });
    expect(config.assistantDefaults).toEqual({
      agent: { config: { configurable: { model_name: "openai" } }, context: {} },
      simple_runtime: { config: {}, context: { model: "unknown" } },
    });
  });

  it("is absent when the variable is unset or empty", () => {
    expect(readRuntimeConfig({}).assistantDefaults).toBeUndefined();
    expect(readAssistantDefaults({ LANGGRAPH_CONFIG: "" })).toBeUndefined();
  });

  it("keeps every config key but context in the config, and a graph id like __proto__ as a plain key", () => {
    const defaults = readAssistantDefaults({
      LANGGRAPH_CONFIG:
        '{"agent": {"tags": ["a"], "recursion_limit": 5, "configurable": {"k": 1}, "context": {"c": 2}, "extra": true},' +
        ' "__proto__": {"configurable": {"p": 1}}}',
    })!;
    expect(defaults.agent).toEqual({
      config: { tags: ["a"], recursion_limit: 5, configurable: { k: 1 }, extra: true },
      context: { c: 2 },
    });
    expect(Object.keys(defaults)).toEqual(["agent", "__proto__"]);
    expect(Object.getPrototypeOf(defaults)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(defaults, "__proto__")?.value).toEqual({
      config: { configurable: { p: 1 } },
      context: {},
    });
  });

  it.each<[string, string, string]>([
    ["malformed JSON", "{agent:", "got text that does not parse"],
    [
      "an array",
      "[]",
      "expected a JSON object of graph id to its system assistant's config, got an array",
    ],
    ["a string", '"agent"', "got a string"],
    [
      "a graph entry that is not an object",
      '{"agent": 1}',
      'expected "agent" to be an object, got number 1',
    ],
    [
      "a context that is not an object",
      '{"agent": {"context": []}}',
      '"agent".context to be an object, got an array',
    ],
    [
      "a configurable that is not an object",
      '{"agent": {"configurable": "secret-key"}}',
      '"agent".configurable to be an object, got a string',
    ],
    [
      "tags that are not strings",
      '{"agent": {"tags": [1]}}',
      '"agent".tags to be an array of strings',
    ],
    [
      "a recursion limit that is not a positive integer",
      '{"agent": {"recursion_limit": 0}}',
      '"agent".recursion_limit to be a positive integer, got number 0',
    ],
  ])("refuses %s, naming the variable and never echoing the value", (_, value, reason) => {
    const error = failure(() => readRuntimeConfig({ LANGGRAPH_CONFIG: value }));
    expect(error.message).toMatch(/^Invalid LANGGRAPH_CONFIG: expected /);
    expect(error.message).toContain(reason);
    expect(error.message).not.toContain("secret-key");
  });

  it("gives each registered graph's system assistant its defaults (copies), and the others none", async () => {
    const registry = new GraphRegistry({ agent: booking, other: booking }, undefined, logger);
    const defaults = readAssistantDefaults({
      LANGGRAPH_CONFIG: JSON.stringify({
        agent: { configurable: { model_name: "openai" }, context: { model: "gpt" } },
        unregistered: { configurable: { x: 1 } },
      }),
    })!;
    const directory = new AssistantDirectory({ registry, store: undefined, defaults });
    const agent = await directory.get("tenant-a", "agent");
    expect(agent).toMatchObject({
      assistantId: systemAssistantId("agent"),
      config: { configurable: { model_name: "openai" } },
      context: { model: "gpt" },
      metadata: { created_by: "system" },
    });
    expect(await directory.get("tenant-b", systemAssistantId("agent"))).toEqual(agent);
    expect(await directory.get("tenant-a", "other")).toMatchObject({ config: {}, context: {} });
    // What the directory serves shares nothing with the configuration it was given.
    (defaults.agent!.config.configurable as Record<string, unknown>).model_name = "changed";
    expect((await directory.get("tenant-a", "agent")).config).toEqual({
      configurable: { model_name: "openai" },
    });
  });
});
