import { eq } from "drizzle-orm";
import { getDb } from "../../db/client";
import { tenants } from "../../db/schema";
import { createIntegration } from "../../server/integrations/create-integration";
import { request } from "../helpers";

export const HOTTOK = "hottok-da-conta-123";
export const hotmartCreds = { client_id: "cid", client_secret: "cs", basic_token: "Basic x", hottok: HOTTOK };

export async function hooksToken(tenantId: string) {
  const db = await getDb();
  const [t] = await db.select({ token: tenants.hooksToken }).from(tenants).where(eq(tenants.id, tenantId));
  return t.token;
}

/** The tenant's Hotmart integration (with the hottok above) and its webhook's path. */
export async function hotmartHook(tenantId: string) {
  await createIntegration(await getDb(), tenantId, { type: "hotmart", credentials: hotmartCreds }, new Date());
  return `/api/hooks/hotmart/${await hooksToken(tenantId)}`;
}

/** A Hotmart webhook 2.0.0 body as its documentation shows it (docs/integrations.md#hotmart). */
export function hotmartBody(event: string, transaction: string, phone: string | null, extra: { email?: string } = {}) {
  const now = Date.now();
  return {
    id: `evt-${transaction}-${event}`,
    creation_date: now,
    event,
    version: "2.0.0",
    data: {
      product: { id: 4774438, ucode: "fb056612-bcc6-4217-9e6d-2a5d1110ac2f", name: "Curso Turma 7" },
      buyer: { email: extra.email ?? "comprador@example.com", name: "Comprador Teste", ...(phone ? { checkout_phone: phone } : {}) },
      purchase: {
        transaction,
        status: event === "PURCHASE_APPROVED" ? "APPROVED" : "REFUNDED",
        approved_date: now,
        order_date: now,
        price: { value: 497, currency_value: "BRL" },
        payment: { type: "PIX", installments_number: 1 },
      },
    },
  };
}

export const postHotmartTo = (baseUrl: string, url: string, body: unknown, hottok = HOTTOK) =>
  request(baseUrl, "POST", url, JSON.stringify(body), { "content-type": "application/json", "x-hotmart-hottok": hottok });
