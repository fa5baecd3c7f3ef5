import type { Metadata } from "next";
import { PartnerApps } from "./partner-apps";

export const metadata: Metadata = { title: "Apps" };

export default function AppsPage() {
  return <PartnerApps />;
}
