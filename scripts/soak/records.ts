import Database from "better-sqlite3";

/** What the gateway's database holds of the soak's calls. */
export interface StoredCalls {
  refs: Set<string>;
  rows: number;
  /** Records whose case id or call label is longer than the 256 characters the gateway admits. */
  overlongLabels: number;
}

/** Reads every call record's ref from the gateway's SQLite file (read-only; the gateway may still be writing). */
export function readStoredCalls(path: string): StoredCalls {
  const database = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const refs = new Set<string>();
    for (const row of database.prepare("SELECT ref FROM calls").iterate() as IterableIterator<{ ref: string }>) {
      refs.add(row.ref);
    }
    const overlong = database
      .prepare(
        "SELECT count(*) AS n FROM calls WHERE length(coalesce(case_id, '')) > 256 " +
          "OR length(coalesce(json_extract(record, '$.call_label'), '')) > 256",
      )
      .get() as { n: number };
    return { refs, rows: refs.size, overlongLabels: overlong.n };
  } finally {
    database.close();
  }
}

/** How many call records the database holds now. */
export function countStoredCalls(path: string): number {
  const database = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return (database.prepare("SELECT count(*) AS n FROM calls").get() as { n: number }).n;
  } finally {
    database.close();
  }
}
