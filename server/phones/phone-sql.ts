/** phone.ts's comparison key in SQL, for queries that meet numbers in the database (leads, buyers, members). */
import { type SQL, sql } from "drizzle-orm";

/**
 * `phoneKey` (phone.ts) of a text expression of digits: a Brazilian mobile (9 + 8 digits starting 6–9) without its
 * ninth digit. The migration h1_phone_key_subscriber recomputed the stored keys with the same expression.
 */
export const phoneKeySql = (phone: SQL) =>
  sql`case when ${phone} ~ '^55[0-9]{2}9[6-9][0-9]{7}$' then substr(${phone}, 1, 4) || substr(${phone}, 6) else ${phone} end`;
