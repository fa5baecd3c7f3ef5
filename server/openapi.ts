import { generateOpenApiDocument, type OpenAPIObject } from "trpc-to-openapi";
import { z } from "zod";
import { env } from "./env";
import { reasonPhrase } from "./http/envelope";
import { bodyCap, describeBytes } from "./http/body-limit";
import { appRouter } from "./root";
import { restPrefix, restRoutesOf } from "./http/routes";
import { partnerOAuthScheme, partnerRouteScopes } from "./oauth/openapi";
import { eventBody, eventTypes } from "./webhooks/events";

const description = `
REST API of the group messaging campaign service. Every decision the published API document leaves
open is recorded here (and, with the reasons behind them, in the repository's docs: docs/api-guide.md
for a guide with one curl per endpoint, docs/decisions.md for the product decisions).

**Authentication.** Send the API key (\`sk_live_\` + 40 base62 characters) in \`x-api-key\` (canonical)
or \`api-key\` (alias). Keys are created in the dashboard or with \`npm run admin -- create-api-key\`,
shown once and stored only as SHA-256 hashes.

**Ids.** \`channel_<uuid>\`, \`segment_<uuid>\`, \`campaign_<uuid>\` (lower-case uuid). A resource of
another tenant answers 404, exactly like a missing one. A malformed id in a path answers 400.

**Success statuses.** create-channel, create-segment and monitoring/group answer 201; everything else 200.

**Errors.** Every non-2xx answer is the envelope
\`{"success":false,"error":"<HTTP reason phrase>","message":"…","code":"…"}\`, plus \`current\`/\`max\`
on count limits. Validation messages name the field (\`groups.2: must be a group id …\`). A wrong
method answers 405 with \`Allow\`; an unknown path 404.

**Channel status.** \`connecting\` (awaiting pairing) → \`connected\` ⇄ \`disconnected\`. Default
channel limit per tenant: 10 (403 with \`current\` and \`max\`).

**Segments.** Every group must exist in the given channels (400 naming the missing ones); a group found
in several channels is sent through the first listed channel that has it. At most ${env.segmentGroupLimit}
groups per segment (\`SEGMENT_GROUP_LIMIT\`: a longer list is 400 naming \`groups\`, refused while
parsing). edit-segment accepts \`name\`, \`id_channel\`, \`groups\` (lists replace the old ones); the
monitoring group must stay outside the segment. A launch's segment follows the launch's groups: only its
\`name\` can be edited (\`groups\` or \`id_channel\` is 400 \`launch_segment\`; add groups with
launch-groups). edit-monitoring/group accepts \`id_channel\` + \`id_group\`, together. An empty body is 400.

**Sizes and content.** \`message\` ≤ 65,536 characters, a carousel card's \`text\` ≤ 1,024, names ≤ 120,
URLs ≤ 2,048 (each schema shows its \`maxLength\`); a string holding NUL or an unpaired UTF-16
surrogate is refused. Each is a 400 naming the field. \`media_url\` and \`image_url\` are https only, and
a host that is an IP literal in a private, loopback, link-local or reserved range, or an internal name
(\`localhost\`, \`*.local\`, \`*.internal\`, a single label), is 400.

**Idempotency** (IETF draft; Stripe's semantics). \`Idempotency-Key\` (1–255 printable ASCII characters)
on create-channel, create-segment and the create-campaign paths. Keys are scoped to the tenant and
kept 24 h. The same key with the same method, path and body (compared as canonical JSON) replays the
stored status and body byte for byte with \`Idempotent-Replayed: true\`. Same key, different request:
422 \`idempotency_key_reused\`. Same key while the first request runs: 409 \`idempotency_in_progress\`.
2xx and 4xx answers are stored; a 5xx is not, so a retry runs again.

**Partner apps (OAuth 2.0).** Partner endpoints (\`/api/external/partner/…\`) take
\`Authorization: Bearer <access_token>\` from the Authorization Code flow (PKCE S256, required from every app; metadata at
\`/.well-known/oauth-authorization-server\`, issuer \`${env.appUrl}\`). Access tokens are opaque and
live 1 h; refresh tokens 30 days and rotate on every use (reusing one revokes the authorization);
codes are single-use and live 60 s. A missing, expired or revoked token is 401 with
\`WWW-Authenticate: Bearer error="invalid_token"\`; a token without the scope 403 \`insufficient_scope\`.
An API key on a partner endpoint, or a partner token on an owner endpoint, is 401.

**Rate limits.** Per API key ${env.rateLimit.apiKeyPerMinute} requests per minute, per partner grant
${env.rateLimit.partnerPerMinute}/min, per client IP on failed authentication
${env.rateLimit.failedAuthPerMinute}/min, on the OAuth endpoints ${env.rateLimit.oauthIpPerMinute}/min. Every
authenticated answer carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\` (seconds);
a 429 carries \`code: "rate_limited"\` and \`Retry-After\` (seconds). Buckets live in the database,
shared by every process. The client IP is the TCP peer's address; behind reverse proxies the operator sets
\`TRUST_PROXY=N\` and the client is then the N-th address from the right of \`X-Forwarded-For\` (a
client-supplied \`X-Forwarded-For\` is otherwise ignored).

**Request bodies.** At most 1 MiB (create-segment and edit-segment: 4 MiB). A larger body is 413
\`code: "payload_too_large"\`, decided from \`Content-Length\` before the body is read; a streamed
(chunked) body is cut off the moment it passes the limit. A request without valid credentials is
answered 401 without its body being read.

**Retention.** Idempotency records are deleted after 24 h, used or expired OAuth codes after a day,
expired or revoked OAuth tokens 30 days after they ended, and the webhook delivery log after
\`WEBHOOK_RETENTION_DAYS\` (30) days, by an hourly maintenance job; nothing pending is ever deleted.
`.trim();

const envelopeSchema = {
  type: "object",
  required: ["success", "error", "message"],
  properties: {
    success: { type: "boolean", const: false },
    error: { type: "string", description: "The HTTP reason phrase of the status", example: "Bad Request" },
    message: { type: "string", description: "Human-readable; validation errors name the field", example: "name: is required" },
    code: {
      type: "string",
      description: "Machine-readable reason",
      examples: [
        "validation_error",
        "malformed_json",
        "unauthorized",
        "channel_limit_reached",
        "series_limit",
        "not_found",
        "conflict",
        "idempotency_key_reused",
        "idempotency_in_progress",
        "rate_limited",
        "payload_too_large",
        "service_unavailable",
        "not_implemented",
        "internal_error",
      ],
    },
    current: { type: "integer", description: "Count in use, on limit errors" },
    max: { type: "integer", description: "The limit, on limit errors" },
    limitExceeded: { type: "boolean" },
    limitType: { type: "string" },
  },
};

const rateLimitHeaders = {
  "RateLimit-Limit": { description: "Requests allowed per minute", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Requests left in the current window", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the window resets", schema: { type: "integer" } },
};

/**
 * OpenAPI 3.1 `webhooks`: what the service POSTs to the account's URL of each event type, from the event's schema
 * (server/webhooks/events.ts); signing and retries are docs/webhooks.md's.
 */
function webhooksSection() {
  return Object.fromEntries(
    eventTypes.map((type) => {
      // As input: no additionalProperties false, so receivers that validate keep accepting fields added later.
      const { $schema: _, ...schema } = z.toJSONSchema(eventBody(type), { io: "input", unrepresentable: "any" });
      const post = {
        operationId: `webhook_${type}`,
        summary: `${type} event`,
        description: `POSTed to \`${type}_url\` (edit-webhooks), signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature).`,
        requestBody: { required: true, content: { "application/json": { schema } } },
        responses: { "2XX": { description: "Received. Anything else, a time-out or a refused connection is retried (docs/webhooks.md)." } },
      };
      return [type, { post }];
    }),
  );
}

type Operation = {
  parameters?: unknown[];
  responses: Record<string, { description?: string; content?: unknown; headers?: unknown }>;
  security?: unknown;
};

/** The document trpc-to-openapi generates, corrected to what the facade really answers. */
export function buildOpenApiDocument(): OpenAPIObject {
  const doc = generateOpenApiDocument(appRouter, {
    title: "Group Messaging Campaign Service — External API",
    version: "1.0.0",
    description,
    baseUrl: env.appUrl + restPrefix,
    docsUrl: `${env.appUrl}/docs`,
    securitySchemes: {
      apiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "Canonical API key header" },
      apiKeyAlias: { type: "apiKey", in: "header", name: "api-key", description: "Accepted alias of x-api-key" },
      partnerOAuth: partnerOAuthScheme() as never,
    },
  });
  doc.servers = [{ url: env.appUrl }];
  doc.components = { ...doc.components, schemas: { ...doc.components?.schemas, ErrorEnvelope: envelopeSchema as never } };
  const paths: Record<string, Record<string, Operation>> = {};
  const restRoutes = restRoutesOf(appRouter);
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const full = restPrefix + path;
    paths[full] = item as Record<string, Operation>;
    for (const [method, op] of Object.entries(item as Record<string, Operation>)) {
      const route = restRoutes.find((r) => r.path === full && r.method === method.toUpperCase());
      if (!route) continue;
      // What the code accepts (docs/decisions.md#auth): a partner endpoint a bearer token with its scope, an owner
      // endpoint an API key in either header (a partner token there is 401; test-webhook 403).
      const partnerScope = partnerRouteScopes[route.procedurePath];
      if (partnerScope) op.security = [{ partnerOAuth: [partnerScope] }];
      else if (route.meta.openapi?.protect !== false) op.security = [{ apiKey: [] }, { apiKeyAlias: [] }];
      const success = route.meta.successStatus ?? 200;
      const ok = op.responses["200"];
      delete op.responses["200"];
      op.responses[String(success)] = { ...ok, headers: rateLimitHeaders };
      if (route.meta.fileResponse) {
        // The facade writes the procedure's file as it is (server/http/rest.ts): a download beside the JSON answer.
        const content = (ok?.content ?? {}) as Record<string, unknown>;
        op.responses[String(success)].content = { ...content, [route.meta.fileResponse]: { schema: { type: "string" } } };
      }
      if (["post", "put", "patch"].includes(method)) {
        // Body caps (server/http/body-limit.ts): checked on Content-Length first, then while reading.
        op.responses["413"] = { description: `Payload Too Large: the body is larger than ${describeBytes(bodyCap(full))}` };
      }
      for (const status of Object.keys(op.responses)) {
        if (Number(status) < 400) continue;
        op.responses[status] = {
          description: op.responses[status]?.description?.startsWith(reasonPhrase(Number(status)))
            ? op.responses[status].description
            : reasonPhrase(Number(status)),
          headers: status === "429" ? { "Retry-After": { schema: { type: "integer" } }, ...rateLimitHeaders } : undefined,
          content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
        };
      }
      if (route.meta.idempotent) {
        op.parameters = [
          ...(op.parameters ?? []),
          {
            name: "Idempotency-Key",
            in: "header",
            required: false,
            description: "Makes a retry safe: the same key and body replay the first answer for 24 h.",
            schema: { type: "string", maxLength: 255 },
          },
        ];
        op.responses[String(success)].headers = {
          ...rateLimitHeaders,
          "Idempotent-Replayed": { description: "true when this answer is a stored replay", schema: { type: "string" } },
        };
      }
    }
  }
  doc.paths = paths as never;
  doc.webhooks = webhooksSection() as never;
  return doc;
}
