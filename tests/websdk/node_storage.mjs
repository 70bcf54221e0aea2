// Storage through node-appwrite 26 with an API key: a bucket, a small file uploaded from a
// buffer, a 12 MB one that the SDK sends in 5 MB chunks (the first alone, the others in
// parallel), both downloaded and compared, the file list with queries, a rename, an extension
// the bucket refuses, then the files and the bucket deleted.
// Usage: node node_storage.mjs <endpoint> <projectId> <apiKey>
import { createHash, randomBytes } from 'node:crypto';
import { Storage, ID, Query, Permission, Role } from 'node-appwrite';
import { InputFile } from 'node-appwrite/file';
import { serverClient, errorOf, guard, report } from './node_sdk.mjs';

const storage = new Storage(serverClient());
const out = {};
guard(out);
const sha = (bytes) => createHash('sha256').update(Buffer.from(bytes)).digest('hex');

const bucket = await storage.createBucket({ bucketId: ID.unique(), name: 'node', permissions: [Permission.read(Role.any())],
  fileSecurity: false, maximumFileSize: 20 * 1024 * 1024, allowedFileExtensions: ['txt', 'bin'] });
const bucketId = bucket.$id;
out.bucket = { name: bucket.name, maximumFileSize: bucket.maximumFileSize, allowedFileExtensions: bucket.allowedFileExtensions };

const text = Buffer.from('hello from node-appwrite 26\n');
const small = await storage.createFile({ bucketId, fileId: ID.unique(), file: InputFile.fromBuffer(text, 'hello.txt') });
out.small = { name: small.name, sizeOriginal: small.sizeOriginal, mimeType: small.mimeType,
  chunksTotal: small.chunksTotal, chunksUploaded: small.chunksUploaded };
out.smallDownloaded = Buffer.from(await storage.getFileDownload({ bucketId, fileId: small.$id })).toString();
out.smallViewed = Buffer.from(await storage.getFileView({ bucketId, fileId: small.$id })).toString();

const blob = randomBytes(12 * 1024 * 1024 + 123);
const progress = [];
const big = await storage.createFile({ bucketId, fileId: ID.unique(), file: InputFile.fromBuffer(blob, 'big.bin'),
  onProgress: (p) => progress.push(p.chunksUploaded) });
out.big = { sizeOriginal: big.sizeOriginal, chunksTotal: big.chunksTotal, chunksUploaded: big.chunksUploaded,
  progress: progress.length, same: sha(await storage.getFileDownload({ bucketId, fileId: big.$id })) === sha(blob) };

out.listed = (await storage.listFiles({ bucketId, queries: [Query.orderAsc('name')] })).files.map((f) => f.name);
out.found = (await storage.listFiles({ bucketId, queries: [Query.equal('name', ['hello.txt'])] })).total;
out.renamed = (await storage.updateFile({ bucketId, fileId: small.$id, name: 'renamed.txt' })).name;
out.refusedExtension = await errorOf(storage.createFile({ bucketId, fileId: ID.unique(),
  file: InputFile.fromBuffer(Buffer.from('MZ'), 'tool.exe') }));
await storage.deleteFile({ bucketId, fileId: small.$id });
await storage.deleteFile({ bucketId, fileId: big.$id });
out.deletedFile = await errorOf(storage.getFile({ bucketId, fileId: small.$id }));
out.buckets = (await storage.listBuckets()).buckets.some((b) => b.$id === bucketId);
await storage.deleteBucket({ bucketId });
out.deletedBucket = await errorOf(storage.getBucket({ bucketId }));
report(out);
