import { handleSimulatorRequest } from "@/server/simulator-http/simulator-control";

export const dynamic = "force-dynamic";

export const GET = handleSimulatorRequest;
export const POST = handleSimulatorRequest;
