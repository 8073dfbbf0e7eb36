/** A value bound to a SQL parameter. */
export type SqlValue = string | number | null;

/** A statement with its parameters. */
export type SqlStatement = readonly [sql: string, params: readonly SqlValue[]];
