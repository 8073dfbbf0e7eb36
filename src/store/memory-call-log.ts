import type { CallRecord } from "../record/call-record.js";

/** Call records kept in memory, the oldest dropped past `capacity`. */
export interface MemoryCallLog {
  append(record: CallRecord): void;
  get(ref: string): CallRecord | undefined;
  list(): CallRecord[];
}

/** A bounded in-memory call log (a Map keeps insertion order, so the first key is the oldest). */
export function memoryCallLog(capacity = 10_000): MemoryCallLog {
  const records = new Map<string, CallRecord>();
  return {
    append(record) {
      records.set(record.ref, record);
      if (records.size > capacity) records.delete(records.keys().next().value as string);
    },
    get: (ref) => records.get(ref),
    list: () => [...records.values()],
  };
}
