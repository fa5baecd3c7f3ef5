import { handleSimulatorRequest } from "@/server/messaging/simulator-control";

export const dynamic = "force-dynamic";

export const GET = handleSimulatorRequest;
export const POST = handleSimulatorRequest;
