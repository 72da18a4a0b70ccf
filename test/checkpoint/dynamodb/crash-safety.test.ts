import { randomBytes, randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { BatchWriteItemCommand, QueryCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  emptyCheckpoint,
  uuid6,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import { DynamoDBSaver } from "../../../src";
import { createLocalClient, createTestTable } from "../../support/dynamodb";
import {
  SimulatedCrash,
  allWritesBut,
  faultInjectingClient,
  firstWrites,
  type CrashPoint,
  type RequestRecord,
} from "../../support/fault-injection";

// A Lambda container can die at any moment of a write: between two requests, or after DynamoDB applied only
// part of a BatchWriteItem and before the writer retried the rest. DynamoDB Local cannot kill a process on
// demand, so the death is injected with SDK middleware (test/support/fault-injection.ts): the dying writer's
// client lets a number of requests through and then sends nothing more. A new saver on a fresh client (a new
// container) then reads everything back and must find every thread readable and every checkpoint whole.

const TEST_TIMEOUT_MS = 45_000;
// A writer's operation must give up soon after its process died; waiting longer only hides a hang.
const SETTLE_DEADLINE_MS = 5_000;
// Requests a writer sends after its operation returned (timers): the dry run waits this long to count them.
const QUIET_WINDOW_MS = 250;
// Crash points checked at once, each on its own thread.
const CONCURRENT_CRASHES = 3;
// Partly processed states tried per BatchWriteItem and kind; a larger batch gets an even sample.
const MAX_SUBSETS_PER_BATCH = 6;

let healthyClient: DynamoDBClient;
let tableName: string;

beforeAll(async () => {
  healthyClient = createLocalClient();
  tableName = await createTestTable(healthyClient, "crash-safety");
});
afterAll(() => healthyClient.destroy());

function saverOn(client: DynamoDBClient, tenantId: string): DynamoDBSaver {
  return new DynamoDBSaver({ tableName, client, tenantId });
}

/** `length` characters of base64 of random bytes: compression takes off a quarter at most, so large stays large. */
function incompressible(length: number): string {
  return randomBytes(Math.ceil((length * 3) / 4))
    .toString("base64")
    .slice(0, length);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Results of `work` on every item, in order, with at most `limit` running at once. */
async function mapConcurrently<T, R>(
  items: T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

// ---------------------------------------------------------------- what the test wrote

type Values = Record<string, unknown>;
type Versions = Record<string, number | string>;

interface ExpectedCheckpoint {
  name: string;
  namespace: string;
  id: string;
  /** Every channel of `channel_versions` with its value: what reading the checkpoint must return. */
  values: Values;
  versions: Versions;
}

interface WriteCall {
  name: string;
  namespace: string;
  checkpointId: string;
  taskId: string;
  writes: PendingWrite[];
}

function checkpointKey(namespace: string, id: string): string {
  return `${namespace}\u0000${id}`;
}

/** Every checkpoint and `putWrites` call the test sent for one thread, stored or only attempted. */
class ThreadModel {
  readonly checkpoints = new Map<string, ExpectedCheckpoint>();
  readonly writeCalls: WriteCall[] = [];
  private step = 0;

  constructor(readonly threadId: string) {}

  get namespaces(): string[] {
    return [...new Set([...this.checkpoints.values()].map((checkpoint) => checkpoint.namespace))];
  }

  checkpoint(name: string): ExpectedCheckpoint {
    const found = [...this.checkpoints.values()].find((checkpoint) => checkpoint.name === name);
    if (!found) throw new Error(`no checkpoint named ${name}`);
    return found;
  }

  find(namespace: string, id: string): ExpectedCheckpoint | undefined {
    return this.checkpoints.get(checkpointKey(namespace, id));
  }

  config(namespace: string, id?: string): RunnableConfig {
    return {
      configurable: { thread_id: this.threadId, checkpoint_ns: namespace, checkpoint_id: id },
    };
  }

  /**
   * The arguments LangGraph passes to `put` for a checkpoint that changes `changes` after `parent`: all current
   * channel values and versions in the checkpoint, only the changed channels in `newVersions`.
   */
  nextPut(
    saver: DynamoDBSaver,
    name: string,
    namespace: string,
    parent: ExpectedCheckpoint | undefined,
    changes: Values,
  ): [RunnableConfig, Checkpoint, CheckpointMetadata, Versions] {
    const versions: Versions = { ...parent?.versions };
    const newVersions: Versions = {};
    for (const channel of Object.keys(changes)) {
      newVersions[channel] = saver.getNextVersion(versions[channel] as number | undefined);
      versions[channel] = newVersions[channel]!;
    }
    const values = { ...parent?.values, ...changes };
    const checkpoint: Checkpoint = {
      ...emptyCheckpoint(),
      id: uuid6(-3),
      channel_values: values,
      channel_versions: versions,
    };
    this.checkpoints.set(checkpointKey(namespace, checkpoint.id), {
      name,
      namespace,
      id: checkpoint.id,
      values,
      versions,
    });
    const metadata: CheckpointMetadata = { source: "loop", step: this.step++, parents: {} };
    return [this.config(namespace, parent?.id), checkpoint, metadata, newVersions];
  }

  async put(
    saver: DynamoDBSaver,
    name: string,
    namespace: string,
    parent: ExpectedCheckpoint | undefined,
    changes: Values,
  ): Promise<ExpectedCheckpoint> {
    const [config, checkpoint, metadata, newVersions] = this.nextPut(
      saver,
      name,
      namespace,
      parent,
      changes,
    );
    await saver.put(config, checkpoint, metadata, newVersions);
    return this.find(namespace, checkpoint.id)!;
  }

  nextWrites(
    name: string,
    checkpoint: ExpectedCheckpoint,
    taskId: string,
    writes: PendingWrite[],
  ): [RunnableConfig, PendingWrite[], string] {
    this.writeCalls.push({
      name,
      namespace: checkpoint.namespace,
      checkpointId: checkpoint.id,
      taskId,
      writes,
    });
    return [this.config(checkpoint.namespace, checkpoint.id), writes, taskId];
  }

  putWrites(
    saver: DynamoDBSaver,
    name: string,
    checkpoint: ExpectedCheckpoint,
    taskId: string,
    writes: PendingWrite[],
  ): Promise<void> {
    return saver.putWrites(...this.nextWrites(name, checkpoint, taskId, writes));
  }
}

// ---------------------------------------------------------------- what a new container reads

interface Observation {
  /** The latest checkpoint of each namespace the test wrote to. */
  latest: Map<string, CheckpointTuple | undefined>;
  /** Each checkpoint the test wrote (or tried to), by namespace and id. */
  byId: Map<string, CheckpointTuple | undefined>;
  listedAll: CheckpointTuple[];
  listedByNamespace: Map<string, CheckpointTuple[]>;
  /** Checkpoints (by key) and namespaces (`latest` reads) whose read threw: reported in `errors`, not as absent. */
  unreadable: Set<string>;
  /** Reads that threw, with what they threw. */
  errors: string[];
}

async function attempt<T>(errors: string[], what: string, read: () => Promise<T>) {
  try {
    return await read();
  } catch (error) {
    errors.push(`${what} threw ${describeError(error)}`);
    return undefined;
  }
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

async function listAll(saver: DynamoDBSaver, config: RunnableConfig, into: CheckpointTuple[]) {
  for await (const tuple of saver.list(config)) into.push(tuple);
}

/** Everything the test wrote to the thread, read back the ways LangGraph reads it. */
async function observe(reader: DynamoDBSaver, model: ThreadModel): Promise<Observation> {
  const errors: string[] = [];
  const latest = new Map<string, CheckpointTuple | undefined>();
  const unreadable = new Set<string>();
  for (const namespace of model.namespaces) {
    const failures = errors.length;
    latest.set(
      namespace,
      await attempt(errors, `getTuple(latest of "${namespace}")`, () =>
        reader.getTuple(model.config(namespace)),
      ),
    );
    if (errors.length > failures) unreadable.add(namespace);
  }
  const byId = new Map<string, CheckpointTuple | undefined>();
  for (const [key, checkpoint] of model.checkpoints) {
    const failures = errors.length;
    byId.set(
      key,
      await attempt(errors, `getTuple(${checkpoint.name})`, () =>
        reader.getTuple(model.config(checkpoint.namespace, checkpoint.id)),
      ),
    );
    if (errors.length > failures) unreadable.add(key);
  }
  const listedAll: CheckpointTuple[] = [];
  await attempt(errors, "list(thread)", () =>
    listAll(reader, { configurable: { thread_id: model.threadId } }, listedAll),
  );
  const listedByNamespace = new Map<string, CheckpointTuple[]>();
  for (const namespace of model.namespaces) {
    const listed: CheckpointTuple[] = [];
    await attempt(errors, `list(thread, "${namespace}")`, () =>
      listAll(reader, model.config(namespace), listed),
    );
    listedByNamespace.set(namespace, listed);
  }
  return { latest, byId, listedAll, listedByNamespace, unreadable, errors };
}

function present(observation: Observation, checkpoint: ExpectedCheckpoint): boolean {
  return observation.byId.get(checkpointKey(checkpoint.namespace, checkpoint.id)) !== undefined;
}

function nameOf(model: ThreadModel, tuple: CheckpointTuple): string {
  const { checkpoint_ns: namespace = "", checkpoint_id: id } = tuple.config.configurable ?? {};
  return model.find(namespace as string, id as string)?.name ?? `unknown checkpoint ${id}`;
}

/** How a checkpoint's channel values differ from what was put: missing, different and unexpected channels. */
function valueDifferences(expected: Values, actual: Values): string[] {
  const differences: string[] = [];
  for (const channel of Object.keys(expected)) {
    if (!(channel in actual)) differences.push(`lacks channel ${channel}`);
    else if (!isDeepStrictEqual(actual[channel], expected[channel]))
      differences.push(`has a different value in ${channel}`);
  }
  for (const channel of Object.keys(actual)) {
    if (!(channel in expected)) differences.push(`has an unexpected channel ${channel}`);
  }
  return differences;
}

/** A tuple must be a checkpoint the test put, whole, with each `putWrites` call's writes all there or none. */
function tupleViolations(model: ThreadModel, tuple: CheckpointTuple, where: string): string[] {
  const { checkpoint_ns: namespace = "", checkpoint_id: id } = tuple.config.configurable ?? {};
  const expected = model.find(namespace as string, id as string);
  if (!expected) return [`${where} returned ${nameOf(model, tuple)}, which was never put`];
  const violations = valueDifferences(expected.values, tuple.checkpoint.channel_values).map(
    (difference) => `${where} returned ${expected.name}, which ${difference}`,
  );
  const writes = tuple.pendingWrites ?? [];
  const calls = model.writeCalls.filter(
    (call) => call.namespace === expected.namespace && call.checkpointId === expected.id,
  );
  for (const call of calls) {
    const found = writes.filter(([taskId]) => taskId === call.taskId);
    const whole = call.writes.map(([channel, value]) => [call.taskId, channel, value]);
    if (found.length > 0 && !isDeepStrictEqual(found, whole)) {
      const matching = found.filter((write) =>
        whole.some((wanted) => isDeepStrictEqual(write, wanted)),
      ).length;
      violations.push(
        `${where} returned ${expected.name} with ${found.length} writes of putWrites ${call.name} ` +
          `(${matching} intact) instead of all ${whole.length} or none`,
      );
    }
  }
  const unknown = writes.filter(([taskId]) => !calls.some((call) => call.taskId === taskId));
  if (unknown.length > 0) {
    violations.push(`${where} returned ${expected.name} with writes no putWrites call sent`);
  }
  return violations;
}

/** What every crash must leave: reads that do not throw, whole checkpoints, reads that agree. */
function readabilityViolations(model: ThreadModel, observation: Observation): string[] {
  const violations = [...observation.errors];
  const seen: Array<[string, CheckpointTuple]> = [];
  for (const [namespace, tuple] of observation.latest) {
    if (tuple) seen.push([`getTuple(latest of "${namespace}")`, tuple]);
  }
  for (const [key, tuple] of observation.byId) {
    if (tuple) seen.push([`getTuple(${model.checkpoints.get(key)!.name})`, tuple]);
  }
  for (const tuple of observation.listedAll) seen.push(["list(thread)", tuple]);
  for (const [namespace, listed] of observation.listedByNamespace) {
    for (const tuple of listed) seen.push([`list(thread, "${namespace}")`, tuple]);
  }
  for (const [where, tuple] of seen) violations.push(...tupleViolations(model, tuple, where));

  // The reads must agree: a checkpoint readable by id is listed and vice versa, the latest is the newest one.
  const readable = [...model.checkpoints.values()].filter((checkpoint) =>
    present(observation, checkpoint),
  );
  const names = (checkpoints: ExpectedCheckpoint[]) =>
    checkpoints
      .map((checkpoint) => checkpoint.name)
      .sort()
      .join(",");
  const listedNames = (tuples: CheckpointTuple[]) =>
    tuples
      .map((tuple) => nameOf(model, tuple))
      .sort()
      .join(",");
  if (observation.errors.length === 0 && listedNames(observation.listedAll) !== names(readable)) {
    violations.push(
      `list(thread) returned [${listedNames(observation.listedAll)}] but getTuple by id found [${names(readable)}]`,
    );
  }
  for (const namespace of model.namespaces) {
    const inNamespace = readable.filter((checkpoint) => checkpoint.namespace === namespace);
    const listed = observation.listedByNamespace.get(namespace) ?? [];
    if (observation.errors.length === 0 && listedNames(listed) !== names(inNamespace)) {
      violations.push(
        `list(thread, "${namespace}") returned [${listedNames(listed)}] but getTuple by id found [${names(inNamespace)}]`,
      );
    }
    const newest = inNamespace.reduce<ExpectedCheckpoint | undefined>(
      (best, checkpoint) => (best === undefined || checkpoint.id > best.id ? checkpoint : best),
      undefined,
    );
    const latest = observation.latest.get(namespace);
    if (observation.errors.length === 0 && latest?.checkpoint.id !== newest?.id) {
      violations.push(
        `getTuple(latest of "${namespace}") returned ${latest ? nameOf(model, latest) : "nothing"} ` +
          `but the newest readable checkpoint is ${newest?.name ?? "none"}`,
      );
    }
  }
  return violations;
}

/** The thread must stay usable: a new container puts the next checkpoint and reads it back whole. */
async function continueThread(
  client: DynamoDBClient,
  tenantId: string,
  model: ThreadModel,
  observation: Observation,
): Promise<string[]> {
  const latest = observation.latest.get("");
  const parent = latest ? model.find("", latest.checkpoint.id) : undefined;
  try {
    const writer = saverOn(client, tenantId);
    const next = await model.put(writer, "next", "", parent, { resumedBy: "a new container" });
    const reader = saverOn(client, tenantId);
    const violations: string[] = [];
    const byId = await reader.getTuple(model.config("", next.id));
    if (!byId)
      violations.push("after the crash, a new checkpoint put on the thread did not read back");
    else violations.push(...tupleViolations(model, byId, "after the crash, getTuple(next)"));
    const newest = await reader.getTuple(model.config(""));
    if (newest?.checkpoint.id !== next.id) {
      violations.push("after the crash, a new checkpoint put on the thread is not the latest");
    }
    return violations;
  } catch (error) {
    return [`after the crash, a new saver could not continue the thread: ${describeError(error)}`];
  }
}

// ---------------------------------------------------------------- crashing a writer

interface CrashScenario {
  /** Builds a thread with a healthy saver; returns the operation to crash and what it must leave. */
  prepare(saver: DynamoDBSaver, threadId: string): Promise<PreparedThread>;
}

interface PreparedThread {
  model: ThreadModel;
  /** The operation under test, on the saver of the process that dies. */
  run(saver: DynamoDBSaver): Promise<unknown>;
  /** What this operation must leave, given what a new container reads and whether the operation returned. */
  check(observation: Observation, returned: boolean): string[];
}

interface LabelledCrashPoint extends CrashPoint {
  label: string;
}

interface CrashReport {
  /** The requests one uninterrupted run of the operation sends. */
  requests: RequestRecord[];
  violations: string[];
}

/** Positions first..last, all of them or an even sample of at most MAX_SUBSETS_PER_BATCH. */
function sample(first: number, last: number): number[] {
  const count = last - first + 1;
  if (count <= 0) return [];
  if (count <= MAX_SUBSETS_PER_BATCH) return Array.from({ length: count }, (_, i) => first + i);
  const picked = Array.from({ length: MAX_SUBSETS_PER_BATCH }, (_, i) =>
    Math.round(first + (i * (count - 1)) / (MAX_SUBSETS_PER_BATCH - 1)),
  );
  return [...new Set(picked)];
}

/**
 * A crash after each request, and inside each BatchWriteItem with part of it processed: the first j write
 * requests (as the simplest reading of UnprocessedItems) and every request but one (DynamoDB processes a batch
 * in no particular order). Nothing of the batch processed is the crash before it, listed already.
 */
function crashPoints(requests: RequestRecord[]): LabelledCrashPoint[] {
  const total = requests.length;
  const points: LabelledCrashPoint[] = [];
  for (let after = 0; after <= total; after += 1) {
    const next = requests[after]?.command;
    points.push({
      after,
      label: next
        ? `crash after ${after} of ${total} requests (before ${next})`
        : `crash right after the last of ${total} requests`,
    });
  }
  requests.forEach((request, index) => {
    const size = request.writeRequests ?? 0;
    const batch = `crash in request ${index + 1} of ${total} (BatchWriteItem of ${size})`;
    for (const count of sample(1, size - 1)) {
      points.push({
        after: index,
        processed: firstWrites(count),
        label: `${batch} with its first ${count} processed`,
      });
    }
    for (const skipped of sample(0, size - 2)) {
      points.push({
        after: index,
        processed: allWritesBut(skipped),
        label: `${batch} with all but write ${skipped + 1} processed`,
      });
    }
  });
  return points;
}

/** Crashes the scenario's operation at every request (and inside every batch) and checks what it leaves. */
async function crashEverywhere(scenario: CrashScenario): Promise<CrashReport> {
  const tenantId = `t-${randomUUID()}`;
  const preparer = saverOn(healthyClient, tenantId);

  // Count the requests of one uninterrupted run: the kill points follow whatever the saver sends today.
  const counting = faultInjectingClient();
  const dry = await scenario.prepare(preparer, randomUUID());
  await dry.run(saverOn(counting.client, tenantId));
  await sleep(QUIET_WINDOW_MS);
  await counting.quiesce();
  const requests = [...counting.requests];
  counting.destroy();

  // Every crash point has its own thread, so a few run at once; DynamoDB Local's latency dominates.
  const points = crashPoints(requests);
  const found = await mapConcurrently(points, CONCURRENT_CRASHES, async (point) => {
    const violations = await crashOnce(scenario, preparer, tenantId, point, requests.length);
    return violations.map((violation) => `${point.label}: ${violation}`);
  });
  const violations = found.flat();
  return { requests, violations };
}

async function crashOnce(
  scenario: CrashScenario,
  preparer: DynamoDBSaver,
  tenantId: string,
  point: LabelledCrashPoint,
  uninterruptedRequests: number,
): Promise<string[]> {
  const prepared = await scenario.prepare(preparer, randomUUID());
  const violations: string[] = [];

  const faults = faultInjectingClient();
  faults.crashAt(point);
  let returned = false;
  let settled = false;
  const operation = prepared
    .run(saverOn(faults.client, tenantId))
    .then(
      () => void (returned = true),
      (error: unknown) => {
        if (!faults.crashed) violations.push(`the operation failed: ${describeError(error)}`);
      },
    )
    .finally(() => void (settled = true));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    operation,
    new Promise((resolve) => (timer = setTimeout(resolve, SETTLE_DEADLINE_MS))),
  ]);
  clearTimeout(timer);
  if (!settled) {
    violations.push(`the operation did not settle within ${SETTLE_DEADLINE_MS} ms of the crash`);
  }
  // Requests the uninterrupted run sent after returning (timers) get their chance before the process dies.
  const deadline = Date.now() + 1_000;
  while (
    faults.requests.length < Math.min(point.after, uninterruptedRequests) &&
    Date.now() < deadline
  ) {
    await sleep(10);
  }
  faults.crash();
  // What got through before the death lands (or not) now; the table no longer changes after this.
  await faults.quiesce();
  faults.destroy();

  const readerClient = createLocalClient();
  try {
    const observation = await observe(saverOn(readerClient, tenantId), prepared.model);
    violations.push(...readabilityViolations(prepared.model, observation));
    violations.push(...prepared.check(observation, returned));
    violations.push(...(await continueThread(readerClient, tenantId, prepared.model, observation)));
  } finally {
    readerClient.destroy();
  }
  return violations;
}

function requireReadable(
  model: ThreadModel,
  observation: Observation,
  names: string[],
  why: string,
): string[] {
  // A read that threw is reported as such already, not as a missing checkpoint.
  return names
    .map((name) => model.checkpoint(name))
    .filter(
      (checkpoint) =>
        !present(observation, checkpoint) &&
        !observation.unreadable.has(checkpointKey(checkpoint.namespace, checkpoint.id)),
    )
    .map((checkpoint) => `checkpoint ${checkpoint.name} is gone (${why})`);
}

function requireWrites(
  model: ThreadModel,
  observation: Observation,
  callName: string,
  why: string,
): string[] {
  const call = model.writeCalls.find((candidate) => candidate.name === callName)!;
  if (observation.unreadable.has(checkpointKey(call.namespace, call.checkpointId))) return [];
  const tuple = observation.byId.get(checkpointKey(call.namespace, call.checkpointId));
  const whole = call.writes.map(([channel, value]) => [call.taskId, channel, value]);
  const found = (tuple?.pendingWrites ?? []).filter(([taskId]) => taskId === call.taskId);
  return isDeepStrictEqual(found, whole)
    ? []
    : [`the writes of putWrites ${callName} are not all there (${why})`];
}

// ---------------------------------------------------------------- scenarios

/**
 * A thread with two checkpoints (B after A), then the put of C: small changed values, two ~150 KB values and
 * one ~700 KB value (chunked), one unchanged value that lives in B and one that lives in A (chunked there).
 */
const putScenario: CrashScenario = {
  async prepare(saver, threadId) {
    const model = new ThreadModel(threadId);
    const a = await model.put(saver, "A", "", undefined, {
      ancestral: incompressible(150_000),
      counter: 1,
      notes: "first",
    });
    const b = await model.put(saver, "B", "", a, { counter: 2, middle: incompressible(100_000) });
    const c = model.nextPut(saver, "C", "", b, {
      counter: 3,
      notes: "third",
      status: "running",
      draftOne: incompressible(150_000),
      draftTwo: incompressible(150_000),
      corpus: incompressible(700_000),
    });
    return {
      model,
      run: (dying) => dying.put(...c),
      check(observation, returned) {
        const violations = requireReadable(model, observation, ["A", "B"], "stored before the put");
        if (observation.unreadable.has("")) return violations;
        const latest = observation.latest.get("");
        const latestName = latest ? nameOf(model, latest) : "nothing";
        if (latestName !== "B" && latestName !== "C") {
          violations.push(`the latest checkpoint is ${latestName}, not B (before) or C (after)`);
        }
        if (returned && latestName !== "C") {
          violations.push(`put returned but the latest checkpoint is ${latestName}, not C`);
        }
        return violations;
      },
    };
  },
};

/** A thread with two checkpoints and a small putWrites for the latest, then one putWrites of large values. */
const putWritesScenario: CrashScenario = {
  async prepare(saver, threadId) {
    const model = new ThreadModel(threadId);
    const a = await model.put(saver, "A", "", undefined, { question: "q", context: "c" });
    const b = await model.put(saver, "B", "", a, { answer: incompressible(80_000) });
    await model.putWrites(saver, "early", b, "task-early", [["progress", "started"]]);
    const large = model.nextWrites("large", b, "task-large", [
      ["draftOne", incompressible(150_000)],
      ["draftTwo", incompressible(150_000)],
      ["corpus", incompressible(500_000)],
      ["summary", "done"],
    ]);
    return {
      model,
      run: (dying) => dying.putWrites(...large),
      check(observation, returned) {
        const violations = [
          ...requireReadable(model, observation, ["A", "B"], "stored before putWrites"),
          ...requireWrites(model, observation, "early", "stored before putWrites"),
        ];
        const latest = observation.latest.get("");
        if (latest && nameOf(model, latest) !== "B") {
          violations.push(`the latest checkpoint is ${nameOf(model, latest)}, not B`);
        }
        if (returned) {
          violations.push(...requireWrites(model, observation, "large", "putWrites returned"));
        }
        return violations;
      },
    };
  },
};

/**
 * A thread with three root checkpoints (chunked values in two), pending writes (one call chunked) and a
 * checkpoint of a subgraph namespace, then deleteThread.
 */
const deleteThreadScenario: CrashScenario = {
  async prepare(saver, threadId) {
    const model = new ThreadModel(threadId);
    const a = await model.put(saver, "A", "", undefined, {
      document: incompressible(150_000),
      turn: 1,
    });
    await model.putWrites(saver, "onA", a, "task-a", [["turn", 2]]);
    const b = await model.put(saver, "B", "", a, { turn: 2, transcript: incompressible(400_000) });
    await model.putWrites(saver, "onB", b, "task-b", [
      ["turn", 3],
      ["attachment", incompressible(150_000)],
    ]);
    const c = await model.put(saver, "C", "", b, { turn: 3 });
    await model.putWrites(saver, "onC", c, "task-c", [["turn", 4]]);
    await model.put(saver, "X", "child:1", undefined, {
      inner: "subgraph state",
      scratch: incompressible(120_000),
    });
    return {
      model,
      run: (dying) => dying.deleteThread(threadId),
      check(observation, returned) {
        const all = [...model.checkpoints.values()];
        const readable = all.filter((checkpoint) => present(observation, checkpoint));
        const violations: string[] = [];
        if (readable.length > 0 && readable.length < all.length) {
          const gone = all.filter((checkpoint) => !readable.includes(checkpoint));
          violations.push(
            `partial delete: ${readable.map((checkpoint) => checkpoint.name).join(",")} still read, ` +
              `${gone.map((checkpoint) => checkpoint.name).join(",")} gone`,
          );
        }
        if (readable.length === all.length) {
          for (const call of model.writeCalls) {
            violations.push(...requireWrites(model, observation, call.name, "thread still there"));
          }
        }
        const listed =
          observation.listedAll.length +
          [...observation.listedByNamespace.values()].reduce((sum, list) => sum + list.length, 0);
        if (readable.length === 0 && listed > 0) {
          violations.push(`deleted thread still lists ${listed} checkpoints`);
        }
        if (returned && readable.length > 0) {
          violations.push("deleteThread returned but the thread still reads");
        }
        return violations;
      },
    };
  },
};

// ---------------------------------------------------------------- the tests

describe("DynamoDBSaver after a writer crash (process death injected with SDK middleware)", () => {
  it(
    "keeps every checkpoint whole when a put of large values dies after any request or inside a batch",
    async () => {
      const report = await crashEverywhere(putScenario);
      expect(report.requests.length).toBeGreaterThan(0);
      expect(report.violations).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "stores all or none of a putWrites call with chunked values when it dies after any request or inside a batch",
    async () => {
      const report = await crashEverywhere(putWritesScenario);
      expect(report.requests.length).toBeGreaterThan(0);
      expect(report.violations).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "leaves a thread whole or entirely gone when deleteThread dies after any request or inside a batch",
    async () => {
      const report = await crashEverywhere(deleteThreadScenario);
      expect(report.requests.length).toBeGreaterThan(0);
      expect(report.violations).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it("lets exactly the armed requests through, and only the processed part of a batch", async () => {
    const faults = faultInjectingClient();
    const pk = `fault-injection-${randomUUID()}`;
    const put = (sk: string) => ({ PutRequest: { Item: { pk: { S: pk }, sk: { S: sk } } } });
    faults.crashAt({ after: 1, processed: firstWrites(2) });
    await faults.client.send(
      new BatchWriteItemCommand({ RequestItems: { [tableName]: [put("a")] } }),
    );
    await expect(
      faults.client.send(
        new BatchWriteItemCommand({
          RequestItems: { [tableName]: [put("b"), put("c"), put("d")] },
        }),
      ),
    ).rejects.toBeInstanceOf(SimulatedCrash);
    await expect(
      faults.client.send(new BatchWriteItemCommand({ RequestItems: { [tableName]: [put("e")] } })),
    ).rejects.toBeInstanceOf(SimulatedCrash);
    faults.destroy();
    expect(faults.requests).toEqual([
      { command: "BatchWriteItem", writeRequests: 1 },
      { command: "BatchWriteItem", writeRequests: 3 },
      { command: "BatchWriteItem", writeRequests: 1 },
    ]);
    const stored = await healthyClient.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": { S: pk } },
        ConsistentRead: true,
      }),
    );
    expect(stored.Items?.map((item) => item.sk?.S)).toEqual(["a", "b", "c"]);
  });
});
