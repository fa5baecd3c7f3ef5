import { createHash } from "node:crypto";
import https from "node:https";
import { isIP } from "node:net";
import { RequestFilteringHttpsAgent } from "request-filtering-agent";
import { env } from "../../env";
import { BadRequest } from "../../errors";
import { isPrivateAddress, publicOnlyLookup } from "../../net/target-address";

const maxBytes = 5 * 1024 * 1024;
const field = "action.picture_url";

/** What the bytes are, from their first ones (a server's content-type alone is not trusted). */
function imageKind(bytes: Buffer): "image/jpeg" | "image/png" | null {
  if (bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  if (bytes.length > 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "image/png";
  return null;
}

/**
 * A set_picture action's image, fetched once when the action is created (CONTRACT §8) under the SSRF rule of §3: https
 * only, the connected address checked after DNS (private, loopback, link-local and reserved refused unless
 * WEBHOOK_ALLOW_PRIVATE=1), no redirect followed, 10 s, a JPEG or PNG of at most 5 MB. Any failure is a 400 naming the field.
 */
export function fetchPicture(url: string, opts: { timeoutMs?: number } = {}): Promise<{ base64: string; sha256: string }> {
  const allowPrivate = env.webhooks.allowPrivate;
  return new Promise((resolve, reject) => {
    const fail = (why: string) => reject(new BadRequest(`${field}: ${why}`));
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return fail("must be an absolute https URL");
    }
    if (target.protocol !== "https:") return fail("must be an https URL");
    const literal = target.hostname.replace(/^\[|\]$/g, "");
    if (!allowPrivate && isIP(literal) !== 0 && isPrivateAddress(literal)) return fail("must not point to a private, loopback, link-local or reserved address");
    const agent = new RequestFilteringHttpsAgent({ allowPrivateIPAddress: allowPrivate, allowMetaIPAddress: allowPrivate });
    const req = https.get(target, { agent, ...(allowPrivate ? {} : { lookup: publicOnlyLookup() }), headers: { accept: "image/jpeg, image/png" } }, (res) => {
      const status = res.statusCode ?? 0;
      if (status < 200 || status >= 300) {
        res.resume();
        return fail(`could not be fetched (HTTP ${status}; redirects are not followed)`);
      }
      const declared = Number(res.headers["content-length"] ?? 0);
      if (declared > maxBytes) {
        res.destroy();
        return fail("is larger than 5 MB");
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          res.destroy();
          fail("is larger than 5 MB");
        } else chunks.push(chunk);
      });
      res.on("end", () => {
        const bytes = Buffer.concat(chunks);
        if (!imageKind(bytes)) return fail("must be an image/jpeg or image/png");
        resolve({ base64: bytes.toString("base64"), sha256: createHash("sha256").update(bytes).digest("hex") });
      });
      res.on("error", (err) => fail(`could not be fetched (${err.message})`));
    });
    req.setTimeout(opts.timeoutMs ?? 10_000, () => req.destroy(new Error("timed out")));
    req.on("error", (err) => fail(`could not be fetched (${err.message})`));
  });
}
