import { dispatchEngine } from "./dispatch";
import type { EngineDefinition } from "./engine";
import { groupActionsEngine } from "./group-actions";
import { launchesEngine } from "./launches";
import { webhooksEngine } from "./webhooks";
import { welcomesEngine } from "./welcomes";

/** Every event-driven engine: this process runs them without Inngest (inngest/in-process/); Inngest serves their functions. */
export const engines: EngineDefinition<never>[] = [dispatchEngine, webhooksEngine, launchesEngine, groupActionsEngine, welcomesEngine];
