import { randomBytes } from "node:crypto";

// Ten digits order ten billion versions of one channel; four random bytes keep sibling forks apart. Short
// versions matter: every checkpoint item stores each channel's version twice (versions and versions seen).
const COUNTER_DIGITS = 10;

/**
 * Mints the next channel version: a zero-padded counter, a dot and a random suffix.
 *
 * Plain string order is version order (what LangGraph compares), and two branches forked from one checkpoint
 * never mint the same version, so neither can read the other's channel values (langgraphjs issue 1812).
 * Accepts LangGraph's integer versions too (the validation suite passes them).
 */
export function nextChannelVersion(current: string | number | undefined): string {
  const counter = parseCounter(current) + 1;
  return `${String(counter).padStart(COUNTER_DIGITS, "0")}.${randomBytes(4).toString("hex")}`;
}

function parseCounter(current: string | number | undefined): number {
  if (current === undefined) return 0;
  if (typeof current === "number") return current;
  const counter = Number.parseInt(current.split(".")[0] ?? "", 10);
  return Number.isFinite(counter) ? counter : 0;
}
