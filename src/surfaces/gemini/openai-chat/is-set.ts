/** A member of a request or an answer that is set (absent and null are not). */
export const isSet = (value: unknown) => value !== undefined && value !== null;
