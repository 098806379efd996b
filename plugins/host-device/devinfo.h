/* What the pod learns of its device: the result's pciID and the device-info file Multus asks for */
#pragma once

#include <stddef.h>

struct cni_result;

/* A PCI address's text ("0000:3b:00.1"), with room to spare. */
#define DEVINFO_PCI_MAX 32

/**
 * devinfo_set_pci() - the pod interface's pciID in the result (CNI 1.1)
 * @res: the result
 * @ifname: the pod interface
 * @pci: its PCI address, "" for none (nothing is set)
 *
 * Return: 0, -ENOMEM.
 */
int devinfo_set_pci(struct cni_result *res, const char *ifname, const char *pci);

/**
 * devinfo_write() - the device-info file (device-info spec 1.1.0, type "pci") Multus asked
 *                   for through runtimeConfig.CNIDeviceInfoFile
 * @path: the file (checked against the node's deviceInfoDirs at config load)
 * @pci: the PCI address ("" writes nothing: the spec has no type for a device without one)
 * @rdma: its RDMA device ("" for none)
 *
 * Written whole by rename beneath the node's directory, which is created when missing;
 * a failure is logged, never an ADD's failure: the pod has its device.
 */
void devinfo_write(const char *path, const char *pci, const char *rdma);
