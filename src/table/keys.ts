import { InvalidIdentifierError } from "../shared/errors";
import { assertIdentifier, assertTenantId } from "../shared/identifiers";

/**
 * Builds and parses every key of the table (see definition.ts for the layout). No other file forms a key, and
 * every partition key starts with the tenant: no code path can address a bare thread id.
 *
 * Ids are encoded so that keys sort as the ids do and `#` separates parts: every character up to `$` becomes `$`
 * and one character from `@` to `d` (in order), everything else stays. Encoded ids then contain no `#`, every
 * encoded character sorts above `#` (so a checkpoint's own items sort between it and the next checkpoint), and
 * encoded ids compare exactly as the ids do by code point, which is how DynamoDB orders string keys.
 */

export const THREAD_RECORD_SK = "m";
export const ROOT_CHECKPOINT_PREFIX = "c#";
export const NESTED_CHECKPOINT_PREFIX = "n#";
const SEPARATOR = "#";
const WRITES_INFIX = "#w#";
const CHUNK_INFIX = "#x#";
const ESCAPE = "$";
const ESCAPE_OFFSET = 0x40;

/** DynamoDB's limits on key sizes (UTF-8 bytes). */
export const MAX_PARTITION_KEY_BYTES = 2048;
export const MAX_SORT_KEY_BYTES = 1024;
/** Longest write sequence the saver mints (keys reserve room for it). */
export const MAX_SEQUENCE_LENGTH = 32;
const CHUNK_DIGITS = 4;
/** Most chunks one write can have (the keys number them with four digits). */
export const MAX_CHUNKS = 10 ** CHUNK_DIGITS;
// The longest suffix after a checkpoint's own sort key: `#x#<seq>#<nnnn>`.
const LONGEST_SUFFIX_BYTES = CHUNK_INFIX.length + MAX_SEQUENCE_LENGTH + 1 + CHUNK_DIGITS;

export function encodeKeyPart(value: string): string {
  let encoded = "";
  for (const character of value) {
    const code = character.codePointAt(0)!;
    encoded +=
      code <= ESCAPE.charCodeAt(0) ? ESCAPE + String.fromCharCode(ESCAPE_OFFSET + code) : character;
  }
  return encoded;
}

export function decodeKeyPart(encoded: string): string {
  let value = "";
  for (let index = 0; index < encoded.length; index += 1) {
    const character = encoded[index]!;
    if (character === ESCAPE) {
      index += 1;
      value += String.fromCharCode(encoded.charCodeAt(index) - ESCAPE_OFFSET);
    } else {
      value += character;
    }
  }
  return value;
}

export function assertThreadId(threadId: unknown): string {
  return assertIdentifier("thread_id", threadId);
}

export function assertCheckpointId(checkpointId: unknown): string {
  return assertIdentifier("checkpoint_id", checkpointId);
}

export { assertTenantId };

/**
 * A checkpoint namespace: `""` for the root graph, else `|`-separated parts (`node:task` per subgraph level),
 * each an identifier. Whether it fits a sort key depends on the checkpoint id too: see assertCheckpointKey.
 */
export function assertNamespace(namespace: unknown): string {
  const value = assertIdentifier("checkpoint_ns", namespace, {
    allowEmpty: true,
    maxLength: MAX_SORT_KEY_BYTES,
  });
  if (value === "") return value;
  for (const part of value.split("|")) assertIdentifier("checkpoint_ns part", part);
  return value;
}

/**
 * Refuses, before any request, a namespace and checkpoint id whose item keys (with the longest suffix a write
 * or chunk adds) would pass DynamoDB's 1,024-byte sort-key limit.
 */
export function assertCheckpointKey(namespace: string, checkpointId: string): void {
  const bytes =
    Buffer.byteLength(checkpointSortKey(namespace, checkpointId)) + LONGEST_SUFFIX_BYTES;
  if (bytes > MAX_SORT_KEY_BYTES) {
    throw new InvalidIdentifierError(
      "checkpoint_ns and checkpoint_id",
      `expected keys of at most ${MAX_SORT_KEY_BYTES} bytes, got ${bytes} (shorten the namespace or the checkpoint id)`,
    );
  }
}

/** `<tenant>#<encoded thread id>`: one partition per tenant thread. Throws when it would not fit a key. */
export function threadPartitionKey(tenantId: string, threadId: string): string {
  const pk = `${tenantId}${SEPARATOR}${encodeKeyPart(threadId)}`;
  const bytes = Buffer.byteLength(pk);
  if (bytes > MAX_PARTITION_KEY_BYTES) {
    throw new InvalidIdentifierError(
      "tenant id and thread_id",
      `expected a key of at most ${MAX_PARTITION_KEY_BYTES} bytes, got ${bytes}`,
    );
  }
  return pk;
}

/** The thread id of a partition key of `tenantId`, or undefined when the key belongs to another tenant. */
export function parseThreadPartitionKey(tenantId: string, pk: string): string | undefined {
  const prefix = `${tenantId}${SEPARATOR}`;
  return pk.startsWith(prefix) ? decodeKeyPart(pk.slice(prefix.length)) : undefined;
}

/**
 * The tenant and thread of any thread's partition key (an encoded thread id never contains `#`, so the last `#`
 * separates them); undefined for a key that is no thread's.
 */
export function parseAnyThreadPartitionKey(
  pk: string,
): { tenantId: string; threadId: string } | undefined {
  const at = pk.lastIndexOf(SEPARATOR);
  if (at <= 0 || at === pk.length - 1 || pk[at - 1] === SEPARATOR) return undefined;
  return { tenantId: pk.slice(0, at), threadId: decodeKeyPart(pk.slice(at + 1)) };
}

/** A partition of the threads-unsettled index, by shard number. */
export function unsettledPartition(shard: number): string {
  return `u${shard}`;
}

/** The threads-unsettled index partition of a thread's partition key: a stable spread over the shards. */
export function unsettledShard(pk: string, shards: number): string {
  let hash = 0;
  for (let index = 0; index < pk.length; index++) hash = (hash * 31 + pk.charCodeAt(index)) >>> 0;
  return unsettledPartition(hash % shards);
}

/**
 * A tenant's partition that is not a thread's: `<tenant>##<kind>` (assistants, the long-term memory store).
 * An encoded thread id never contains `#`, so no thread's partition key can equal one of these.
 */
export function tenantPartitionKey(tenantId: string, kind: string): string {
  if (!/^[a-z][a-z0-9-]*(#[^#]+)*$/.test(kind)) {
    throw new RangeError(`Invalid partition kind: ${JSON.stringify(kind)}`);
  }
  return `${tenantId}${SEPARATOR}${SEPARATOR}${kind}`;
}

/** The partition of a tenant's crons: `<tenant>##crons`. */
export function cronsPartitionKey(tenantId: string): string {
  return tenantPartitionKey(tenantId, "crons");
}

/** Prefix of every cron item's sort key in the crons partition. */
export const CRON_PREFIX = "k#";

/** A cron: `k#<cron id>` in its tenant's crons partition. */
export function cronSortKey(cronId: string): string {
  return `${CRON_PREFIX}${encodeKeyPart(cronId)}`;
}

/** The cron id of a cron item's sort key. */
export function parseCronSortKey(sk: string): string {
  if (!sk.startsWith(CRON_PREFIX)) {
    throw new RangeError(`Invalid sort key: ${JSON.stringify(sk)} is not a cron key`);
  }
  return decodeKeyPart(sk.slice(CRON_PREFIX.length));
}

/** The tenant of a crons partition key (a tenant id never contains `#`); undefined for any other key. */
export function parseCronsPartitionKey(pk: string): string | undefined {
  const suffix = `${SEPARATOR}${SEPARATOR}crons`;
  if (!pk.endsWith(suffix)) return undefined;
  const tenantId = pk.slice(0, -suffix.length);
  return tenantId.length > 0 && !tenantId.includes(SEPARATOR) ? tenantId : undefined;
}

/**
 * A partition of the due-crons entries of the threads-unsettled index, by shard number: `c<shard>`, never a
 * thread's `u<shard>`, so the run-recovery sweep and the cron sweep read disjoint partitions of one index.
 */
export function duePartition(shard: number): string {
  return `c${shard}`;
}

/** The due-crons partition of a cron: a stable spread of its key over the shards. */
export function dueShard(pk: string, sk: string, shards: number): string {
  const key = `${pk}${SEPARATOR}${sk}`;
  let hash = 0;
  for (let index = 0; index < key.length; index++) hash = (hash * 31 + key.charCodeAt(index)) >>> 0;
  return duePartition(hash % shards);
}

/** Prefix of every run record's sort key in a thread's partition (after `m` and `n#`, so thread reads skip them). */
export const RUN_PREFIX = "r#";

/** A run record: `r#<run id>` in its thread's partition (run ids are UUIDv7, so key order is creation order). */
export function runSortKey(runId: string): string {
  return `${RUN_PREFIX}${encodeKeyPart(runId)}`;
}

/** Prefix of a run's stream events in its thread's partition (after the run records). */
export const RUN_EVENT_PREFIX = "s#";

/** Every event item of one run: `s#<run id>#`. */
export function runEventPrefix(runId: string): string {
  return `${RUN_EVENT_PREFIX}${encodeKeyPart(runId)}${SEPARATOR}`;
}

/**
 * One part of one stream event: `s#<run id>#<seq>#<part>`, sequence and part zero-padded so key order is stream
 * order (an event over one item's size takes several parts).
 */
export function runEventSortKey(runId: string, seq: number, part: number): string {
  return `${runEventPrefix(runId)}${String(seq).padStart(10, "0")}${SEPARATOR}${String(part).padStart(3, "0")}`;
}

/** The sort-key range of a run's events from `fromSeq` on: every part of every later event. */
export function runEventRange(runId: string, fromSeq: number): { low: string; high: string } {
  // Sequence numbers are digits, which sort before "~": the range ends after the run's last event.
  return { low: runEventSortKey(runId, fromSeq, 0), high: `${runEventPrefix(runId)}~` };
}

/** The sequence number and part a run event's sort key holds. */
export function parseRunEventSortKey(
  runId: string,
  sortKey: string,
): { seq: number; part: number } {
  const prefix = runEventPrefix(runId);
  const [seq, part] = sortKey.slice(prefix.length).split(SEPARATOR).map(Number);
  if (!sortKey.startsWith(prefix) || !Number.isSafeInteger(seq) || !Number.isSafeInteger(part)) {
    throw new RangeError(`Invalid run event key: ${JSON.stringify(sortKey)}`);
  }
  return { seq: seq!, part: part! };
}

/** The partition of a tenant's assistants. */
export function assistantsPartitionKey(tenantId: string): string {
  return tenantPartitionKey(tenantId, "assistants");
}

export const ASSISTANT_PREFIX = "a#";
export const ASSISTANT_VERSION_PREFIX = "v#";

/** An assistant's current version: `a#<assistant id>`. */
export function assistantSortKey(assistantId: string): string {
  return `${ASSISTANT_PREFIX}${encodeKeyPart(assistantId)}`;
}

/** One version of an assistant: `v#<assistant id>#<version>`, versions in order. */
export function assistantVersionSortKey(assistantId: string, version: number): string {
  return `${assistantVersionPrefix(assistantId)}${String(version).padStart(10, "0")}`;
}

/** Prefix of every version of one assistant. */
export function assistantVersionPrefix(assistantId: string): string {
  return `${ASSISTANT_VERSION_PREFIX}${encodeKeyPart(assistantId)}${SEPARATOR}`;
}

/** Prefix of every checkpoint (and pending-write and chunk) sort key of one namespace. */
export function checkpointPrefix(namespace: string): string {
  return namespace === ""
    ? ROOT_CHECKPOINT_PREFIX
    : `${NESTED_CHECKPOINT_PREFIX}${encodeKeyPart(namespace)}${SEPARATOR}`;
}

export function checkpointSortKey(namespace: string, checkpointId: string): string {
  return `${checkpointPrefix(namespace)}${encodeKeyPart(checkpointId)}`;
}

/** Bounds of the key range holding one checkpoint and its own writes and chunks (a BETWEEN condition). */
export function checkpointItemRange(checkpointSk: string): { low: string; high: string } {
  // Suffixes start with `#w#` or `#x#`; `~` sorts above both letters, and an encoded id never has `#`.
  return { low: checkpointSk, high: `${checkpointSk}${SEPARATOR}~` };
}

/** Pending writes of one checkpoint stored together; `sequence` is unique and time-ordered. */
export function writesSortKey(checkpointSk: string, sequence: string): string {
  return `${checkpointSk}${WRITES_INFIX}${assertSequence(sequence)}`;
}

/**
 * Chunk `index` of what the write `sequence` of a checkpoint could not hold inline. Chunks sort right after
 * their checkpoint, so the Query that reads the checkpoint usually reads them too.
 */
export function chunkSortKey(checkpointSk: string, sequence: string, index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_CHUNKS) {
    throw new RangeError(`Invalid chunk index: expected 0 to ${MAX_CHUNKS - 1}, got ${index}`);
  }
  return `${checkpointSk}${CHUNK_INFIX}${assertSequence(sequence)}${SEPARATOR}${String(index).padStart(CHUNK_DIGITS, "0")}`;
}

export type ParsedSortKey =
  | { kind: "record" }
  | { kind: "checkpoint"; namespace: string; checkpointId: string; checkpointSk: string }
  | {
      kind: "writes";
      namespace: string;
      checkpointId: string;
      checkpointSk: string;
      sequence: string;
    }
  | {
      kind: "chunk";
      namespace: string;
      checkpointId: string;
      checkpointSk: string;
      sequence: string;
      index: number;
    };

/** What a sort key addresses: the thread record, or a checkpoint, writes or chunk item and its checkpoint. */
export function parseSortKey(sk: string): ParsedSortKey {
  if (sk === THREAD_RECORD_SK) return { kind: "record" };
  const parts = sk.split(SEPARATOR);
  let namespace = "";
  let rest: string[];
  if (parts[0] === "c") {
    rest = parts.slice(1);
  } else if (parts[0] === "n" && parts.length >= 3) {
    namespace = decodeKeyPart(parts[1]!);
    rest = parts.slice(2);
  } else {
    throw new RangeError(`Invalid sort key: ${JSON.stringify(sk)} is not a Memory Table key`);
  }
  const checkpointId = decodeKeyPart(rest[0] ?? "");
  const checkpointSk = checkpointSortKey(namespace, checkpointId);
  if (rest.length === 1) return { kind: "checkpoint", namespace, checkpointId, checkpointSk };
  if (rest[1] === "w" && rest.length === 3) {
    return { kind: "writes", namespace, checkpointId, checkpointSk, sequence: rest[2]! };
  }
  if (rest[1] === "x" && rest.length === 4) {
    return {
      kind: "chunk",
      namespace,
      checkpointId,
      checkpointSk,
      sequence: rest[2]!,
      index: Number(rest[3]),
    };
  }
  throw new RangeError(`Invalid sort key: ${JSON.stringify(sk)} is not a Memory Table key`);
}

function assertSequence(sequence: string): string {
  if (!/^[0-9a-z]+$/.test(sequence) || sequence.length > MAX_SEQUENCE_LENGTH) {
    throw new RangeError(`Invalid write sequence: ${JSON.stringify(sequence)}`);
  }
  return sequence;
}

// ---------------------------------------------------------------- API keys

/**
 * Prefix of the partition of an API key's lookup item: `#api-key#<key id>`, sort key `k`. The one partition that
 * does not start with a tenant: an authorizer holding only the presented key must find its record in one
 * GetItem, and the key names its tenant only through that record. A tenant id never contains `#` and is never
 * empty, so no tenant's partition can start with `#`; IAM can grant exactly these items (`dynamodb:LeadingKeys`
 * like `#api-key#*`).
 */
export const API_KEY_LOOKUP_PREFIX = "#api-key#";
export const API_KEY_LOOKUP_SK = "k";
/** Sort-key prefix of a tenant's API key listing items (`<tenant>##api-keys`, `sk = k#<key id>`). */
export const API_KEY_LISTING_PREFIX = "k#";

/** Key ids are minted by the runtime (lowercase hex): anything else is no key of ours. */
function assertApiKeyId(keyId: string): string {
  if (!/^[0-9a-f]{16,64}$/.test(keyId)) {
    throw new RangeError(`Invalid API key id: ${JSON.stringify(keyId)}`);
  }
  return keyId;
}

/** The lookup item of an API key, found from the presented key alone. */
export function apiKeyLookupKey(keyId: string): { pk: string; sk: string } {
  return { pk: `${API_KEY_LOOKUP_PREFIX}${assertApiKeyId(keyId)}`, sk: API_KEY_LOOKUP_SK };
}

/** The partition of a tenant's API key listing items: `<tenant>##api-keys`. */
export function apiKeysPartitionKey(tenantId: string): string {
  return tenantPartitionKey(tenantId, "api-keys");
}

/** A tenant's listing item of one key (what `list` reads, by a Query on the tenant's partition). */
export function apiKeyListingKey(tenantId: string, keyId: string): { pk: string; sk: string } {
  return {
    pk: apiKeysPartitionKey(tenantId),
    sk: `${API_KEY_LISTING_PREFIX}${assertApiKeyId(keyId)}`,
  };
}

// ---------------------------------------------------------------- the long-term memory store

/**
 * Prefix of every store item's sort key. A store item is `i#<label>#<label>#…##<key>` in the tenant's store
 * partition: each namespace label is encoded and closed by `#`, then a second `#` and the encoded key. Labels are
 * never empty, so `##` is where the namespace ends; `#` sorts below every encoded character, so a namespace's own
 * items come before its children and the items of every namespace starting with some labels are one key range.
 */
export const STORE_ITEM_PREFIX = "i#";

/** The partition of a tenant's long-term memory store: `<tenant>##store`. */
export function storePartitionKey(tenantId: string): string {
  return tenantPartitionKey(tenantId, "store");
}

/** Prefix of the sort keys of every item whose namespace starts with `labels` (`[]`: every item). */
export function storeNamespacePrefix(labels: readonly string[]): string {
  let prefix = STORE_ITEM_PREFIX;
  for (const label of labels) {
    if (label.length === 0) throw new RangeError("Invalid store namespace label: empty");
    prefix += `${encodeKeyPart(label)}${SEPARATOR}`;
  }
  return prefix;
}

/** Prefix of the sort keys of the items of exactly `namespace` (not of its children). */
export function storeOwnItemsPrefix(namespace: readonly string[]): string {
  return `${storeNamespacePrefix(namespace)}${SEPARATOR}`;
}

/** The sort key of one store item. */
export function storeItemSortKey(namespace: readonly string[], key: string): string {
  if (namespace.length === 0) throw new RangeError("Invalid store namespace: empty");
  if (key.length === 0) throw new RangeError("Invalid store key: empty");
  return `${storeOwnItemsPrefix(namespace)}${encodeKeyPart(key)}`;
}

/** The namespace and key of a store item's sort key. */
export function parseStoreItemSortKey(sk: string): { namespace: string[]; key: string } {
  const end = sk.indexOf(`${SEPARATOR}${SEPARATOR}`, STORE_ITEM_PREFIX.length - 1);
  if (!sk.startsWith(STORE_ITEM_PREFIX) || end < STORE_ITEM_PREFIX.length) {
    throw new RangeError(`Invalid sort key: ${JSON.stringify(sk)} is not a store item key`);
  }
  const labels = sk.slice(STORE_ITEM_PREFIX.length, end + 1).split(SEPARATOR);
  labels.pop(); // the empty part after the last label's closing `#`
  const encodedKey = sk.slice(end + 2);
  if (encodedKey.length === 0 || encodedKey.includes(SEPARATOR) || labels.includes("")) {
    throw new RangeError(`Invalid sort key: ${JSON.stringify(sk)} is not a store item key`);
  }
  return { namespace: labels.map(decodeKeyPart), key: decodeKeyPart(encodedKey) };
}

/**
 * The first sort key after every key starting with `prefix` (a prefix from storeNamespacePrefix or
 * storeOwnItemsPrefix, so it ends with `#`): `#` becomes `$`, the next character up. No store item has this key
 * (it has no `##`), so it is a safe inclusive bound of a BETWEEN, and the lower bound that skips a whole range.
 */
export function storePrefixEnd(prefix: string): string {
  if (!prefix.startsWith(STORE_ITEM_PREFIX) || !prefix.endsWith(SEPARATOR)) {
    throw new RangeError(`Invalid store key prefix: ${JSON.stringify(prefix)}`);
  }
  return `${prefix.slice(0, -1)}${String.fromCharCode(SEPARATOR.charCodeAt(0) + 1)}`;
}
