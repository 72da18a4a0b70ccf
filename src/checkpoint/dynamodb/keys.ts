import { InvalidIdentifierError } from "../../shared/errors";
import { assertIdentifier } from "../../shared/identifiers";

/**
 * Builds and parses every key of the table (see table-definition.ts for the layout). No other file forms a key,
 * and every key starts with the tenant: no code path can address a bare thread id.
 *
 * Tenant ids may not contain `#` (they prefix partition keys, and IAM `dynamodb:LeadingKeys` policies match
 * `<tenant>#*`). Thread ids, namespaces, channels and task ids are escaped (`%` -> `%25`, `#` -> `%23`), so no
 * choice of identifiers can forge another key: `a` + `b#c` and `a#b` + `c` stay distinct.
 */

export const THREAD_RECORD_SK = "m";
export const ROOT_CHECKPOINT_PREFIX = "c#";
export const NESTED_CHECKPOINT_PREFIX = "n#";
const WRITES_INFIX = "#w#";
const CHUNK_INFIX = "#x#";

export function escapeKeyPart(value: string): string {
  return value.replace(/%/g, "%25").replace(/#/g, "%23");
}

export function unescapeKeyPart(value: string): string {
  return value.replace(/%23/g, "#").replace(/%25/g, "%");
}

export function assertTenantId(tenantId: unknown): string {
  return assertIdentifier("tenant id", tenantId, { forbidden: "#" });
}

export function assertThreadId(threadId: unknown): string {
  return assertIdentifier("thread_id", threadId);
}

// DynamoDB limits a sort key to 1,024 bytes; a namespace shares it with a prefix and a checkpoint id.
const MAX_NAMESPACE_KEY_BYTES = 800;

/**
 * A checkpoint namespace: `""` for the root graph, else `|`-separated parts (`node:task` per subgraph level).
 * Each part is an identifier (at most 256 characters); the escaped whole must fit in a sort key.
 */
export function assertNamespace(namespace: unknown): string {
  const value = assertIdentifier("checkpoint_ns", namespace, {
    allowEmpty: true,
    maxLength: MAX_NAMESPACE_KEY_BYTES,
  });
  if (value === "") return value;
  for (const part of value.split("|")) assertIdentifier("checkpoint_ns part", part);
  const bytes = Buffer.byteLength(escapeKeyPart(value));
  if (bytes > MAX_NAMESPACE_KEY_BYTES) {
    throw new InvalidIdentifierError(
      "checkpoint_ns",
      `expected at most ${MAX_NAMESPACE_KEY_BYTES} bytes once escaped, got ${bytes}`,
    );
  }
  return value;
}

export function assertCheckpointId(checkpointId: unknown): string {
  return assertIdentifier("checkpoint_id", checkpointId);
}

export function assertTaskId(taskId: unknown): string {
  return assertIdentifier("task id", taskId);
}

/** `<tenant>#<escaped thread id>`: one partition per tenant thread. */
export function buildPk(tenantId: string, threadId: string): string {
  return `${tenantId}#${escapeKeyPart(threadId)}`;
}

/** The thread id of a partition key of `tenantId`, or undefined when the key belongs to another tenant. */
export function parsePk(tenantId: string, pk: string): string | undefined {
  const prefix = `${tenantId}#`;
  return pk.startsWith(prefix) ? unescapeKeyPart(pk.slice(prefix.length)) : undefined;
}

/** Prefix of every checkpoint (and pending-write) sort key of one namespace. */
export function checkpointPrefix(namespace: string): string {
  return namespace === ""
    ? ROOT_CHECKPOINT_PREFIX
    : `${NESTED_CHECKPOINT_PREFIX}${escapeKeyPart(namespace)}#`;
}

export function buildCheckpointSk(namespace: string, checkpointId: string): string {
  return `${checkpointPrefix(namespace)}${escapeKeyPart(checkpointId)}`;
}

/** Prefix of the pending writes of one checkpoint. */
export function writesPrefix(namespace: string, checkpointId: string): string {
  return `${buildCheckpointSk(namespace, checkpointId)}${WRITES_INFIX}`;
}

/** Pending writes of one checkpoint committed in one batch; `seq` is unique and time-ordered. */
export function buildWritesSk(namespace: string, checkpointId: string, seq: string): string {
  return `${writesPrefix(namespace, checkpointId)}${seq}`;
}

/**
 * A chunk of a value too large for its owner item (a checkpoint's channel value or a pending write): chunks sort
 * right after their owner, so the Query that reads the owner usually reads them too.
 */
export function buildChunkSk(ownerSk: string, part: string, chunk: number): string {
  return `${ownerSk}${CHUNK_INFIX}${escapeKeyPart(part)}#${String(chunk).padStart(4, "0")}`;
}

/** The namespace and checkpoint id of a checkpoint, pending-write or chunk sort key. */
export function parseCheckpointSk(sk: string): { namespace: string; checkpointId: string } {
  let namespace = "";
  let rest: string;
  if (sk.startsWith(ROOT_CHECKPOINT_PREFIX)) {
    rest = sk.slice(ROOT_CHECKPOINT_PREFIX.length);
  } else if (sk.startsWith(NESTED_CHECKPOINT_PREFIX)) {
    const body = sk.slice(NESTED_CHECKPOINT_PREFIX.length);
    const separator = body.indexOf("#");
    namespace = unescapeKeyPart(body.slice(0, separator));
    rest = body.slice(separator + 1);
  } else {
    throw new Error(`Not a checkpoint sort key: ${sk}`);
  }
  const end = rest.indexOf("#");
  return { namespace, checkpointId: unescapeKeyPart(end === -1 ? rest : rest.slice(0, end)) };
}
