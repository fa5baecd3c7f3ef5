import type { Metadata } from "next";
import { ActivityLog } from "./activity-log";

export const metadata: Metadata = { title: "Registro de atividades" };

export default function ActivityLogPage() {
  return <ActivityLog />;
}
