import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { env, persistentSecret } from "../env";

/**
 * Encryption at rest for secrets we must read back (webhook signing secrets, integration credentials):
 * AES-256-GCM, key from ENCRYPTION_KEY (any string; SHA-256 makes it 32 bytes) or generated once under
 * DATA_DIR. Stored form: `v1:<key id>:<iv b64url>:<tag b64url>:<ciphertext b64url>`.
 *
 * Key rotation: set ENCRYPTION_KEY to the new key and ENCRYPTION_KEY_PREVIOUS to the old one (comma
 * separated for several); values written under an old key still decrypt, and `needsReencryption` tells a
 * caller to write them again under the current key.
 */
const ALGORITHM = "aes-256-gcm";

interface Key {
  id: string;
  bytes: Buffer;
}

function keyFrom(material: string): Key {
  const bytes = createHash("sha256").update(material).digest();
  return { id: createHash("sha256").update(bytes).digest("base64url").slice(0, 8), bytes };
}

function currentKey(): Key {
  return keyFrom(persistentSecret("ENCRYPTION_KEY", "encryption-key"));
}

function knownKeys(): Key[] {
  return [currentKey(), ...env.encryptionKeysPrevious.map(keyFrom)];
}

export function encryptSecret(plaintext: string): string {
  const key = currentKey();
  const iv = randomBytes(12);
  const cipher = createCipheriv(ALGORITHM, key.bytes, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return ["v1", key.id, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), ciphertext.toString("base64url")].join(":");
}

export function decryptSecret(stored: string): string {
  const [version, keyId, iv, tag, ciphertext] = stored.split(":");
  if (version !== "v1" || !keyId || !iv || !tag || ciphertext === undefined) throw new Error("Not an encrypted secret");
  const key = knownKeys().find((candidate) => candidate.id === keyId);
  if (!key) throw new Error("Secret was encrypted with an unknown key (set ENCRYPTION_KEY_PREVIOUS to the old key)");
  const decipher = createDecipheriv(ALGORITHM, key.bytes, Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
}

/** True when the value was written under a previous key and should be written again. */
export function needsReencryption(stored: string): boolean {
  return stored.split(":")[1] !== currentKey().id;
}
