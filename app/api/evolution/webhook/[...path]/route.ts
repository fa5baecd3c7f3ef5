import { handleEvolutionWebhook } from "@/server/messaging/evolution-webhook";

export const dynamic = "force-dynamic";

export const POST = (req: Request) => handleEvolutionWebhook(req);
