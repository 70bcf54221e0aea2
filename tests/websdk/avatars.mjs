// Every Avatars operation through the web SDK 27, which returns image URLs; each is loaded.
// node avatars.mjs <endpoint> <projectId> <originUrl>
import { Avatars, Browser, Client, CreditCard, Flag } from "appwrite";

const [endpoint, project, origin] = process.argv.slice(2);
const avatars = new Avatars(new Client().setEndpoint(endpoint).setProject(project));

async function load(url) {
  const r = await fetch(url);
  const body = await r.arrayBuffer();
  return { status: r.status, type: r.headers.get("content-type"), bytes: body.byteLength,
           disposition: r.headers.get("content-disposition") };
}

const qr = await load(avatars.getQR({ text: "hello", size: 100, download: true }));
console.log(JSON.stringify({
  browser: await load(avatars.getBrowser({ code: Browser.MozillaFirefox, width: 40, height: 40 })),
  creditCard: await load(avatars.getCreditCard({ code: CreditCard.Mastercard })),
  flag: await load(avatars.getFlag({ code: Flag.France })),
  initials: await load(avatars.getInitials({ name: "Ada Lovelace", width: 80, height: 80 })),
  qr,
  qrDownload: qr.disposition,
  image: await load(avatars.getImage({ url: `${origin}/a.png`, width: 20, height: 20 })),
  favicon: await load(avatars.getFavicon({ url: `${origin}/page` })),
}));
