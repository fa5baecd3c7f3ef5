import { afterEach, describe, expect, it } from "vitest";
import { decryptSecret, encryptSecret, needsReencryption } from "./secret-box";

const saved = { key: process.env.ENCRYPTION_KEY, previous: process.env.ENCRYPTION_KEY_PREVIOUS };
afterEach(() => {
  process.env.ENCRYPTION_KEY = saved.key;
  process.env.ENCRYPTION_KEY_PREVIOUS = saved.previous;
  if (saved.key === undefined) delete process.env.ENCRYPTION_KEY;
  if (saved.previous === undefined) delete process.env.ENCRYPTION_KEY_PREVIOUS;
});

describe("secret box", () => {
  it("round-trips and never stores the plaintext", () => {
    process.env.ENCRYPTION_KEY = "key-one";
    const stored = encryptSecret("whsec_abc");
    expect(stored).not.toContain("whsec_abc");
    expect(encryptSecret("whsec_abc")).not.toBe(stored);
    expect(decryptSecret(stored)).toBe("whsec_abc");
  });

  it("rejects a tampered value", () => {
    process.env.ENCRYPTION_KEY = "key-one";
    const parts = encryptSecret("secret").split(":");
    parts[4] = Buffer.from("other!").toString("base64url");
    expect(() => decryptSecret(parts.join(":"))).toThrow();
  });

  it("reads values of a previous key after rotation and flags them for re-encryption", () => {
    process.env.ENCRYPTION_KEY = "old-key";
    const stored = encryptSecret("credential");
    process.env.ENCRYPTION_KEY = "new-key";
    expect(() => decryptSecret(stored)).toThrow(/unknown key/);
    process.env.ENCRYPTION_KEY_PREVIOUS = "old-key";
    expect(decryptSecret(stored)).toBe("credential");
    expect(needsReencryption(stored)).toBe(true);
    expect(needsReencryption(encryptSecret("credential"))).toBe(false);
  });
});
