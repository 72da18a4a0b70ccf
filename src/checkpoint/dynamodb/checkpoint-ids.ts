// Milliseconds between the UUID epoch (1582-10-15) and the Unix epoch.
const UUID_EPOCH_OFFSET_MS = 12_219_292_800_000;
const UUID_V6 = /^([0-9a-f]{8})-([0-9a-f]{4})-6([0-9a-f]{3})-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * When a UUIDv6 checkpoint id was minted (epoch milliseconds), or undefined for any other id. LangGraph mints
 * every checkpoint id as a UUIDv6 at the step that creates the checkpoint.
 */
export function checkpointIdMintedAt(checkpointId: string): number | undefined {
  const match = UUID_V6.exec(checkpointId);
  if (!match) return undefined;
  const ticks = BigInt(`0x${match[1]}${match[2]}${match[3]}`); // 100 ns units since the UUID epoch
  return Number(ticks / 10_000n) - UUID_EPOCH_OFFSET_MS;
}
