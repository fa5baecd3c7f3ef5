/**
 * The marketplaces' inbound webhooks as their documentation describes them (docs/integrations.md#inbound-webhooks-buyers,
 * with the sources): how each one authenticates, and what of its body becomes a purchase notice. Only what was
 * confirmed is read; any other event of a confirmed platform is acknowledged and ignored.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { normalisePhone } from "../phones/phone";
import type { PurchaseNotice } from "../launches/funnel/record-purchase";
import type { HookType } from "./types";

export type ParsedHook =
  | { kind: "notice"; event: string; notice: PurchaseNotice }
  | { kind: "ignored"; event: string }
  | { kind: "invalid"; field: string; message: string };

export interface HookFormat {
  /** Whether the request carries the integration's secret the platform's way. */
  authentic(req: { headers: Headers; url: URL; raw: Uint8Array }, secret: string): boolean;
  parse(body: unknown): ParsedHook;
}

/** Equal strings, compared in constant time (their SHA-256s, so lengths leak nothing either). */
function sameSecret(given: string, expected: string) {
  const digest = (v: string) => createHash("sha256").update(v, "utf8").digest();
  return timingSafeEqual(digest(given), digest(expected));
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : {});
/** A non-empty string (numbers as their text), trimmed and cut to `max`; null otherwise. */
function str(v: unknown, max = 200): string | null {
  const s = typeof v === "string" ? v.trim() : typeof v === "number" && Number.isFinite(v) ? String(v) : "";
  return s ? s.slice(0, max) : null;
}
const email = (v: unknown) => {
  const s = str(v, 254)?.toLowerCase() ?? null;
  return s?.includes("@") ? s : null;
};
const phone = (...candidates: unknown[]) => {
  for (const c of candidates) {
    const s = str(c, 40);
    const p = s ? normalisePhone(s) : null;
    if (p) return p;
  }
  return null;
};
const millis = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? new Date(v) : null);

/**
 * Hotmart, webhook version 2.0.0 (JSON): the account's `hottok` in the `X-HOTMART-HOTTOK` header. Approved and
 * completed purchases count; refunds and chargebacks undo them; every other event is ignored.
 */
const hotmartStatus: Record<string, PurchaseNotice["status"]> = {
  PURCHASE_APPROVED: "approved",
  PURCHASE_COMPLETE: "approved",
  PURCHASE_REFUNDED: "refunded",
  PURCHASE_CHARGEBACK: "refunded",
};

export const hotmart: HookFormat = {
  authentic: ({ headers }, secret) => {
    const given = headers.get("x-hotmart-hottok");
    return given !== null && sameSecret(given, secret);
  },
  parse(body) {
    const b = obj(body);
    if (b.version !== "2.0.0") return { kind: "invalid", field: "version", message: 'must be "2.0.0": choose version 2.0.0 for this webhook in Hotmart' };
    const event = str(b.event, 100);
    if (!event) return { kind: "invalid", field: "event", message: "is required" };
    const status = hotmartStatus[event];
    if (!status) return { kind: "ignored", event };
    const data = obj(b.data);
    const purchase = obj(data.purchase);
    const transaction = str(purchase.transaction, 100);
    if (!transaction) return { kind: "invalid", field: "data.purchase.transaction", message: "is required" };
    const buyer = obj(data.buyer);
    const product = obj(data.product);
    const price = obj(purchase.price);
    return {
      kind: "notice",
      event,
      notice: {
        transaction,
        status,
        phone: phone(buyer.checkout_phone, buyer.phone),
        email: email(buyer.email),
        name: str(buyer.name),
        productId: str(product.id, 100),
        productName: str(product.name),
        amount: typeof price.value === "number" && Number.isFinite(price.value) ? String(price.value) : null,
        currency: str(price.currency_value, 10),
        occurredAt: (status === "approved" ? millis(purchase.approved_date) : null) ?? millis(b.creation_date),
      },
    };
  },
};

/**
 * Kiwify (JSON): `signature` in the query, the lowercase hex HMAC-SHA1 of the body as it arrived keyed with the
 * webhook's token. `order_status` `paid` counts; `refunded` and `chargedback` undo it; anything else is ignored.
 */
const kiwifyStatus: Record<string, PurchaseNotice["status"]> = { paid: "approved", refunded: "refunded", chargedback: "refunded" };

export const kiwify: HookFormat = {
  authentic: ({ url, raw }, secret) => {
    const given = url.searchParams.get("signature");
    if (!given || !/^[0-9a-fA-F]{40}$/.test(given)) return false;
    const expected = createHmac("sha1", secret).update(raw).digest();
    return timingSafeEqual(Buffer.from(given, "hex"), expected);
  },
  parse(body) {
    const b = obj(body);
    const orderStatus = str(b.order_status, 100);
    if (!orderStatus) return { kind: "invalid", field: "order_status", message: "is required" };
    const event = str(b.webhook_event_type, 100) ?? orderStatus;
    const status = kiwifyStatus[orderStatus];
    if (!status) return { kind: "ignored", event };
    const transaction = str(b.order_id, 100);
    if (!transaction) return { kind: "invalid", field: "order_id", message: "is required" };
    const customer = obj(b.Customer);
    const product = obj(b.Product);
    return {
      kind: "notice",
      event,
      notice: {
        transaction,
        status,
        phone: phone(customer.mobile),
        email: email(customer.email),
        name: str(customer.full_name),
        productId: str(product.product_id, 100),
        productName: str(product.product_name),
        // Kiwify's amount fields could not be confirmed from its documentation: not read.
        amount: null,
        currency: null,
        occurredAt: null,
      },
    };
  },
};

export const hookFormats: Record<HookType, HookFormat> = { hotmart, kiwify };
