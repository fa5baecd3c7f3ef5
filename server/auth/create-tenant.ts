import type { Db } from "../../db/client";
import { memberships, tenants, users } from "../../db/schema";
import { env } from "../env";
import { Conflict } from "../errors";
import { newId } from "../ids";
import { createApiKey } from "../keys/create-api-key";
import { hashPassword } from "./password";
import { isUniqueViolation } from "../../db/errors";

/** A tenant with its owner user (a one-owner team, docs/team.md) and a first API key, all or nothing. */
export async function createTenant(db: Db, input: { name: string; email: string; password: string }) {
  const passwordHash = await hashPassword(input.password);
  try {
    return await db.transaction(async (tx) => {
      const tenantId = newId("tenant");
      await tx.insert(tenants).values({ id: tenantId, name: input.name, channelLimit: env.defaultChannelLimit });
      const userId = newId("user");
      await tx.insert(users).values({
        id: userId,
        tenantId,
        email: input.email.trim().toLowerCase(),
        name: input.name,
        passwordHash,
      });
      await tx.insert(memberships).values({ tenantId, userId, role: "owner" });
      const key = await createApiKey(tx, tenantId);
      return { tenantId, userId, apiKey: key.apiKey };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new Conflict(`An account with the email ${input.email} already exists.`, "email_taken");
    throw err;
  }
}
