import { handleEvolutionWebhook } from "@/server/evolution-http/evolution-webhook";

export const dynamic = "force-dynamic";

export const POST = (req: Request) => handleEvolutionWebhook(req);
