import { handleInboundHook } from "@/server/hooks-http/inbound-hook";

export const dynamic = "force-dynamic";

/** The marketplaces' inbound webhooks (docs/integrations.md#inbound-webhooks-buyers). */
export const POST = (req: Request) => handleInboundHook(req);
