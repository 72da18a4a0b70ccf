import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { LOCAL_CLIENT_CONFIG } from "./dynamodb-local";
import { localEndpoint } from "./dynamodb";

/**
 * A process death, injected with AWS SDK middleware: DynamoDB Local cannot kill a writer on demand. Once a
 * client has "died", every request it is asked to send rejects with this error without reaching DynamoDB, the
 * way nothing leaves a dead Lambda container (retries and timers left behind included).
 */
export class SimulatedCrash extends Error {
  override readonly name = "SimulatedCrash";

  constructor(message = "the process died (injected by SDK middleware)") {
    super(message);
  }
}

/** One request a client was asked to send, whether or not it got through. */
export interface RequestRecord {
  command: string;
  /** For BatchWriteItem: how many put and delete requests the batch holds. */
  writeRequests?: number;
}

/**
 * Which write requests of a BatchWriteItem DynamoDB processed (the rest it returned as UnprocessedItems):
 * given the batch's size, the positions kept. DynamoDB does not process a batch in order, so any subset is a
 * state a crashed writer can leave behind.
 */
export type ProcessedSubset = (size: number) => number[];

export interface CrashPoint {
  /** Requests that get through before the crash. */
  after: number;
  /**
   * If the next request is a BatchWriteItem, DynamoDB processes these of its write requests before the process
   * dies (it never retries the rest). Without it, or for any other command, the next request is not sent at all.
   */
  processed?: ProcessedSubset;
}

export interface FaultInjectingClient {
  client: DynamoDBClient;
  /** Every request the client was asked to send, in order, including the ones the crash swallowed. */
  readonly requests: readonly RequestRecord[];
  /** Requests that reached DynamoDB (in whole or, for the crash batch, in part). */
  readonly delivered: number;
  /** Whether the armed crash point was reached (the operation did not get to finish). */
  readonly crashed: boolean;
  /** Arms the crash: the process dies at `point`. */
  crashAt(point: CrashPoint): void;
  /** The process dies now, whatever was armed. */
  crash(): void;
  /** Resolves once no request that got through is still on its way: the table no longer changes. */
  quiesce(): Promise<void>;
  destroy(): void;
}

type WriteRequest = Record<string, unknown>;

/** A DynamoDB Local client whose requests are counted and which dies at an armed crash point. */
export function faultInjectingClient(): FaultInjectingClient {
  const requests: RequestRecord[] = [];
  const inFlight = new Set<Promise<unknown>>();
  let delivered = 0;
  let armed: CrashPoint | undefined;
  let dead = false;
  let crashed = false;
  const client = new DynamoDBClient({ ...LOCAL_CLIENT_CONFIG, endpoint: localEndpoint() });

  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName).replace(/Command$/, "");
      const input = args.input as { RequestItems?: Record<string, WriteRequest[]> };
      const batch = command === "BatchWriteItem" ? flattenBatch(input.RequestItems) : undefined;
      requests.push(
        batch === undefined ? { command } : { command, writeRequests: batch.entries.length },
      );
      if (dead) throw new SimulatedCrash();
      if (armed !== undefined && delivered >= armed.after) {
        dead = true;
        crashed = true;
        if (batch === undefined || armed.processed === undefined) throw new SimulatedCrash();
        const kept = armed.processed(batch.entries.length);
        if (kept.length > 0) {
          // DynamoDB applied part of the batch; the process died before it could retry the rest.
          delivered += 1;
          await track(
            inFlight,
            next({ ...args, input: { ...args.input, RequestItems: batch.rebuild(kept) } }),
          );
        }
        throw new SimulatedCrash();
      }
      delivered += 1;
      return track(inFlight, next(args));
    },
    { step: "initialize", name: "simulatedCrash" },
  );

  return {
    client,
    requests,
    get delivered() {
      return delivered;
    },
    get crashed() {
      return crashed;
    },
    crashAt(point) {
      armed = point;
    },
    crash() {
      dead = true;
    },
    async quiesce() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    destroy() {
      client.destroy();
    },
  };
}

function track<T>(inFlight: Set<Promise<unknown>>, request: Promise<T>): Promise<T> {
  inFlight.add(request);
  const forget = () => inFlight.delete(request);
  request.then(forget, forget);
  return request;
}

/** The write requests of a batch in order, and a way to rebuild the batch from a subset of them. */
function flattenBatch(requestItems: Record<string, WriteRequest[]> | undefined) {
  const entries = Object.entries(requestItems ?? {}).flatMap(([table, writes]) =>
    writes.map((write) => ({ table, write })),
  );
  return {
    entries,
    rebuild(positions: number[]): Record<string, WriteRequest[]> {
      const rebuilt: Record<string, WriteRequest[]> = {};
      for (const position of [...new Set(positions)].sort((a, b) => a - b)) {
        const entry = entries[position];
        if (entry) (rebuilt[entry.table] ??= []).push(entry.write);
      }
      return rebuilt;
    },
  };
}

/** DynamoDB processed the first `count` write requests of the batch. */
export function firstWrites(count: number): ProcessedSubset {
  return (size) => Array.from({ length: Math.min(count, size) }, (_, position) => position);
}

/** DynamoDB processed every write request of the batch but the one at `skipped`. */
export function allWritesBut(skipped: number): ProcessedSubset {
  return (size) =>
    Array.from({ length: size }, (_, position) => position).filter(
      (position) => position !== skipped,
    );
}
