import { createHmac, randomBytes } from "node:crypto";

/** A new Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export const newSigningSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

/**
 * The `webhook-signature` header: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per secret, space
 * separated (Standard Webhooks allows several, which is how a rotation's grace period works).
 */
export function signatureHeader(secrets: string[], messageId: string, timestampSeconds: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
      return `v1,${createHmac("sha256", key).update(`${messageId}.${timestampSeconds}.${body}`).digest("base64")}`;
    })
    .join(" ");
}
