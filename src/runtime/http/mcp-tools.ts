import { randomUUID } from "node:crypto";
import {
  ErrorCode,
  McpError,
  type CallToolResult,
  type ListToolsResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import type { JsonSchemaType } from "@modelcontextprotocol/sdk/validation/types.js";
import type { AssistantRecord } from "../../shared/assistants";
import { graphSchemas, type IntrospectableGraph } from "../graphs/graph-schemas";
import { toWireJson } from "../runs/wire-json";
import type { RouteContext } from "./route-context";
import { parseRunBody } from "./run-body";
import { waitForRun } from "./runs-face";
import { MAX_ASSISTANT_PAGE } from "./schemas/assistant-schemas";

/**
 * The tenant's assistants as MCP tools, as LangGraph Platform's `/mcp` offers them: one tool per assistant, named
 * after it, with its description and its graph's input schema; a call runs the assistant statelessly, as `POST
 * /runs/wait` runs it, and answers with the run's output. The assistants are read through the directory's search,
 * as `POST /assistants/search` reads them, so a tenant sees only what that route would show it.
 */

/** Assistants one `tools/list` page holds: the largest page the assistants' search serves. */
export const MCP_TOOLS_PAGE = MAX_ASSISTANT_PAGE;

/** Tools in the order of the assistants' default search: newest first, so a newer assistant's name wins. */
const ORDER = { sortBy: "created_at", sortOrder: "desc" } as const;

/** A tool's input schema when the graph tells none: any object (MCP requires an object schema). */
const ANY_OBJECT = { type: "object" } as const;

/** Distinct input schemas whose compiled validators are kept (a container serves a few graphs). */
const MAX_VALIDATORS = 64;

type Validate = (value: unknown) => { valid: boolean; errorMessage?: string };
let validators = new AjvJsonSchemaValidator();
const compiled = new Map<string, Validate>();

/**
 * A page of tools (`cursor`: the offset a previous page named). An assistant whose name an earlier one of the page
 * took is left out: MCP tools are called by name, and a call must reach the tool the list showed.
 */
export async function listTools(context: RouteContext, cursor?: string): Promise<ListToolsResult> {
  const offset = offsetOf(cursor);
  const page = await context.assistants.search(context.tenantId, {
    ...ORDER,
    offset,
    limit: MCP_TOOLS_PAGE,
  });
  const schemas = new Map<string, Promise<Tool["inputSchema"]>>();
  const tools: Tool[] = [];
  const named = new Set<string>();
  for (const assistant of page.assistants) {
    if (named.has(assistant.name)) continue;
    named.add(assistant.name);
    // One schema per graph, however many of its assistants the page holds.
    if (!schemas.has(assistant.graphId)) {
      schemas.set(assistant.graphId, inputSchemaOf(context, assistant.graphId));
    }
    tools.push(toolOf(assistant, await schemas.get(assistant.graphId)!));
  }
  const next = offset + MCP_TOOLS_PAGE;
  return { tools, ...(next < page.total ? { nextCursor: String(next) } : {}) };
}

/**
 * Runs the tool `name` (the newest of the tenant's assistants with that name) with `args` as its graph's input.
 * An unknown tool is a protocol error (-32602, as the MCP spec lists it); arguments that do not match the input
 * schema are a tool error (`isError`, as the spec and the SDK's own server answer them) and run nothing; a run that
 * fails, stops at an interrupt or outlives the request is a tool error that says so.
 */
export async function callTool(
  context: RouteContext,
  name: string,
  args: Record<string, unknown> | undefined,
): Promise<CallToolResult> {
  const assistant = await assistantNamed(context, name);
  if (!assistant) throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`);
  context.log.assistant = assistant.assistantId;
  const input = args ?? {};
  const schema = await inputSchemaOf(context, assistant.graphId);
  const refusal = argumentsRefusal(schema, input);
  if (refusal !== undefined) {
    return toolError(`Input validation error: Invalid arguments for tool ${name}: ${refusal}`);
  }
  const body = parseRunBody({ assistant_id: assistant.assistantId, input }, context.webhooks);
  const { answer } = await waitForRun(context, randomUUID(), true, { body, assistant });
  return resultOf(answer);
}

/** What a waited run answered, as a tool result: its values, or why there are none. */
function resultOf(answer: Record<string, unknown>): CallToolResult {
  const failure = answer.__error__ as { error?: string; message?: string } | undefined;
  if (failure) {
    return toolError(`${failure.error ?? "Error"}: ${failure.message ?? "the run failed"}`);
  }
  if (Array.isArray(answer.__interrupt__) && answer.__interrupt__.length > 0) {
    // The run's thread was made for the call and is gone: nobody can resume it through MCP.
    return toolError(
      `The agent stopped to wait for a human (an interrupt), which a stateless MCP call cannot resume: run it on a thread through the LangGraph API instead. Interrupts: ${JSON.stringify(answer.__interrupt__)}`,
    );
  }
  // Messages as plain dicts, as every route writes values (never LangChain's serialization envelope).
  const text = toWireJson(answer);
  return {
    content: [{ type: "text", text }],
    structuredContent: JSON.parse(text) as Record<string, unknown>,
  };
}

function toolError(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/** The assistant a tool name calls: the one `tools/list` shows under it (the newest of that name). */
async function assistantNamed(
  context: RouteContext,
  name: string,
): Promise<AssistantRecord | undefined> {
  let offset = 0;
  for (;;) {
    // The search's name filter matches parts of names: the exact name is picked from its matches.
    const page = await context.assistants.search(context.tenantId, {
      ...ORDER,
      name,
      offset,
      limit: MCP_TOOLS_PAGE,
    });
    const found = page.assistants.find((assistant) => assistant.name === name);
    if (found) return found;
    offset += MCP_TOOLS_PAGE;
    if (offset >= page.total) return undefined;
  }
}

function toolOf(assistant: AssistantRecord, inputSchema: Tool["inputSchema"]): Tool {
  return {
    name: assistant.name,
    ...(assistant.description ? { description: assistant.description } : {}),
    inputSchema,
  };
}

/** The graph's input schema (as `GET /assistants/{id}/schemas` serves it), as an MCP tool's object schema. */
async function inputSchemaOf(context: RouteContext, graphId: string): Promise<Tool["inputSchema"]> {
  const graph = (await context.engine.graph(graphId, context.tenantId)) as IntrospectableGraph;
  const { input } = graphSchemas(graph, (await context.registry.schemasFromSource(graphId))?.graph);
  if (typeof input !== "object" || input === null || Array.isArray(input)) return { ...ANY_OBJECT };
  const schema = input as Record<string, unknown>;
  // A graph's input is its state's fields: an object, even where the schema leaves `type` out.
  return { ...schema, type: "object" } as Tool["inputSchema"];
}

/** Why `input` does not match `schema`, or undefined when it does. */
function argumentsRefusal(schema: Tool["inputSchema"], input: unknown): string | undefined {
  const validate = validatorOf(schema);
  if (!validate) return undefined;
  const result = validate(input);
  return result.valid ? undefined : (result.errorMessage ?? "does not match the input schema");
}

/**
 * The schema's validator, compiled once per distinct schema (the validator keeps what it compiled, so a schema
 * built anew for each call must not be compiled anew). Undefined for a schema it cannot compile: the graph then
 * checks its own input.
 */
function validatorOf(schema: Tool["inputSchema"]): Validate | undefined {
  // Checked as draft-07, whatever dialect the schema names (zod writes 2020-12, which the validator lacks): the
  // keywords a graph's input uses mean the same in both.
  const { $schema: _dialect, ...checked } = schema as Record<string, unknown>;
  const key = JSON.stringify(checked);
  const known = compiled.get(key);
  if (known) return known;
  if (compiled.size >= MAX_VALIDATORS) {
    compiled.clear();
    validators = new AjvJsonSchemaValidator();
  }
  try {
    const validate: Validate = validators.getValidator(checked as JsonSchemaType);
    compiled.set(key, validate);
    return validate;
  } catch {
    return undefined;
  }
}

function offsetOf(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  if (!/^\d{1,9}$/.test(cursor)) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Invalid cursor: expected one a tools/list answered`,
    );
  }
  return Number(cursor);
}
