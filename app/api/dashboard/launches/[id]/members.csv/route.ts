import { handleLaunchCsv } from "@/server/launches-http/launch-csv";

export const dynamic = "force-dynamic";

/** The launch's members as a CSV download, streamed, in the dashboard session (server/launches-http/launch-csv.ts). */
export const GET = async (req: Request, { params }: { params: Promise<{ id: string }> }) => handleLaunchCsv(req, (await params).id, "members");
