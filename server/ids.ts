import { randomUUID } from "node:crypto";

export const newId = <P extends string>(prefix: P) => `${prefix}_${randomUUID()}` as `${P}_${string}`;

const uuid = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
export const idPattern = (prefix: string) => new RegExp(`^${prefix}_${uuid}$`);
