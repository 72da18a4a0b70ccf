import { randomBytes } from "node:crypto";

const COUNTER_DIGITS = 16;

/**
 * Mints the next channel version: a zero-padded counter, a dot and a random suffix.
 *
 * Plain string order is version order (what LangGraph compares), and two branches forked from one checkpoint
 * never mint the same version, so neither can read the other's channel values (langgraphjs issue 1812).
 * Accepts LangGraph's integer versions too (the validation suite passes them).
 */
export function nextChannelVersion(current: string | number | undefined): string {
  const counter = parseCounter(current) + 1;
  return `${String(counter).padStart(COUNTER_DIGITS, "0")}.${randomBytes(6).toString("hex")}`;
}

function parseCounter(current: string | number | undefined): number {
  if (current === undefined) return 0;
  if (typeof current === "number") return current;
  const counter = Number.parseInt(current.split(".")[0] ?? "", 10);
  return Number.isFinite(counter) ? counter : 0;
}
