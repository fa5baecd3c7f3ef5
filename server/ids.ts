import { randomUUID } from "node:crypto";
import { z } from "zod";

export const newId = <P extends string>(prefix: P) => `${prefix}_${randomUUID()}` as `${P}_${string}`;

const uuid = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
export const idPattern = (prefix: string) => new RegExp(`^${prefix}_${uuid}$`);

/** A resource token `<prefix>_<uuid>` as the API takes and answers it. */
export const tokenSchema = (prefix: string) => z.string().regex(idPattern(prefix), `must be a ${prefix} token of the form ${prefix}_<uuid>`);
