import { serve } from "inngest/next";
import { inngest } from "@/inngest/client";
import { functions } from "@/inngest/served";

export const dynamic = "force-dynamic";

/** Inngest calls this to discover (PUT), inspect (GET) and run (POST) the functions. */
export const { GET, POST, PUT } = serve({ client: inngest, functions });
