import { stopProcess } from "./dynamodb-local";

export default async function globalTeardown(): Promise<void> {
  const pid = Number(process.env.MEMORY_TABLE_TEST_DYNAMODB_PID);
  if (Number.isInteger(pid) && pid > 0) stopProcess(pid);
}
