import type { Metadata } from "next";
import { Campaigns } from "./campaigns";

export const metadata: Metadata = { title: "Campanhas" };

export default function CampaignsPage() {
  return <Campaigns />;
}
